using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Microsoft.Playwright;
using MuxWatch.Testing;
using static Microsoft.Playwright.Assertions;

namespace MuxWatch.Browser.Tests;

/// <summary>
/// The fleet's reading on the page (<c>MuxWatch:FleetPrometheusUrl</c>), in a real browser: the sidecar reads a real
/// Prometheus that scrapes it and evaluates the shipped rules, and the incident of a posted timeout shows what the fleet
/// said of its endpoint. The replicas' own verdicts are FleetEndToEndTests'; here, the page.
/// </summary>
public sealed class FleetPageTests : IClassFixture<BrowserSession>, IAsyncLifetime
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(45);

    private readonly BrowserSession _browser;
    private PrometheusProcess _prometheus = null!;
    private ServiceProcess _service = null!;

    public FleetPageTests(BrowserSession browser)
    {
        _browser = browser;
        SetDefaultExpectTimeout((float)Patience.TotalMilliseconds);
    }

    public async Task InitializeAsync()
    {
        var port = FreePort.Next();
        _prometheus = await PrometheusProcess.StartAsync($"127.0.0.1:{port}", rules: Path.Combine(BuiltProgram.RepositoryRoot, "alerts", "muxwatch.rules.yml"));
        try
        {
            _service = await ServiceProcess.StartOnAsync(port, new Dictionary<string, string>(),
                $"--MuxWatch:FleetPrometheusUrl={_prometheus.Address}", "--MuxWatch:FleetReadDelay=00:00:01");
        }
        catch
        {
            await _prometheus.DisposeAsync(); // xunit does not dispose a class whose initialization failed
            throw;
        }
    }

    public async Task DisposeAsync()
    {
        await _service.DisposeAsync();
        await _prometheus.DisposeAsync();
    }

    [Fact]
    public async Task An_incident_shows_what_the_fleet_said_of_its_endpoint()
    {
        const string message = "Timeout performing GET cart:42 (5000ms), inst: 0, qu: 0, qs: 3, in: 0, serverEndpoint: 10.9.9.9:6379, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=1,Free=32766,Min=2,Max=32767)";
        using (var posted = await _service.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent(message, Encoding.UTF8, "text/plain")))
        {
            Assert.True(posted.IsSuccessStatusCode, await posted.Content.ReadAsStringAsync());
        }

        // Nobody watches 10.9.9.9:6379 in that Prometheus: the reading says so, and says why it could be.
        string? text = null;
        await Eventually.UntilAsync(async () =>
        {
            using var answer = JsonDocument.Parse(await _service.Client.GetStringAsync(new Uri("/api/incidents", UriKind.Relative)));
            var incident = answer.RootElement.GetProperty("incidents")[0];
            text = incident.TryGetProperty("fleet", out var fleet) && fleet.ValueKind == JsonValueKind.Object ? fleet.GetProperty("text").GetString() : null;
            return text is not null;
        }, "the incident to carry the fleet's reading", Patience);
        Assert.StartsWith("Prometheus knew no instance watching 10.9.9.9:6379 then", text, StringComparison.Ordinal);

        var (page, errors) = await _browser.NewPageAsync();
        await page.GotoAsync($"http://127.0.0.1:{_service.Port}/");
        var fleetLine = page.Locator("#incidents .incident[data-endpoint='10.9.9.9:6379'] .fleet");
        await Expect(fleetLine).ToContainTextAsync("Fleet: Prometheus knew no instance watching 10.9.9.9:6379 then");
        await Expect(fleetLine).ToHaveAttributeAsync("data-fleet-verdict", "none");
        Assert.Empty(errors);
    }
}
