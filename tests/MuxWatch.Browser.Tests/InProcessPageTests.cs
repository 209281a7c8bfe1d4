using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using StackExchange.Redis;
using static Microsoft.Playwright.Assertions;

namespace MuxWatch.Browser.Tests;

/// <summary>
/// An ASP.NET Core app that watches its own multiplexer in-process and maps the page with one call
/// (<c>app.MapMuxWatchPage()</c>, beside <c>app.MapMuxWatchApi()</c>): its own timeouts during a real
/// stall appear on its own page, each with the cause its API gives, drawn on the server's timeline.
/// </summary>
public sealed class InProcessPageTests : IClassFixture<BrowserSession>, IAsyncLifetime
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(45);

    private readonly BrowserSession _browser;
    private RedisServer _redis = null!;
    private ConnectionMultiplexer _multiplexer = null!;
    private WebApplication _app = null!;
    private HttpClient _client = null!;
    private int _port;

    public InProcessPageTests(BrowserSession browser)
    {
        _browser = browser;
        SetDefaultExpectTimeout((float)Patience.TotalMilliseconds);
    }

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        try
        {
            await StartAppAsync();
        }
        catch
        {
            await _redis.DisposeAsync(); // xunit does not dispose a class whose initialization failed
            throw;
        }
    }

    private async Task StartAppAsync()
    {
        _multiplexer = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},syncTimeout=500,asyncTimeout=500,abortConnect=false");
        _port = FreePort.Next();
        var builder = WebApplication.CreateBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{_port}");
        builder.Services.AddSingleton<IConnectionMultiplexer>(_multiplexer);
        builder.Services.AddMuxWatch().AddMultiplexer("cache", sp => sp.GetRequiredService<IConnectionMultiplexer>());
        _app = builder.Build();
        _app.MapMuxWatchApi();
        _app.MapMuxWatchPage();
        await _app.StartAsync();
        _client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{_port}") };
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
        await _multiplexer.DisposeAsync();
        await _redis.DisposeAsync();
    }

    [Fact]
    public async Task The_apps_own_timeouts_in_a_stall_appear_on_its_own_page_with_their_causes()
    {
        var (page, errors) = await _browser.NewPageAsync();
        await page.GotoAsync($"http://127.0.0.1:{_port}/muxwatch");
        await Expect(page.Locator("#targets tr[data-target='cache']")).ToHaveAttributeAsync("data-state", "connected");
        await Expect(page.Locator("#targets tr[data-target='cache']")).ToContainTextAsync(_redis.EndPoint);
        await Eventually.UntilAsync(async () => (await TimeoutsAsync()) is not null && await PolledAsync(), "the first complete poll of the app's server");

        // The app's own requests, one after another while the server sleeps: each waits its 500 ms and times out.
        var stall = _redis.CommandInBackground("DEBUG", "SLEEP", "2");
        var database = _multiplexer.GetDatabase();
        var thrown = 0;
        while (!stall.IsCompleted)
        {
            try
            {
                await database.StringGetAsync("inprocess-page");
            }
            catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
            {
                thrown++;
            }
        }

        await stall;
        Assert.True(thrown > 0, "no request failed during the stall");

        List<JsonElement> recorded = [];
        await Eventually.UntilAsync(async () =>
        {
            recorded = (await TimeoutsAsync())!;
            return recorded.Count >= thrown && recorded.All(t => t.GetProperty("settled").GetBoolean());
        }, "the app's timeouts recorded and settled", Patience);

        var rows = page.Locator("#timeouts tbody tr[data-timeout-id]");
        await Expect(rows).ToHaveCountAsync(recorded.Count);
        foreach (var timeout in recorded)
        {
            var row = page.Locator($"#timeouts tr[data-timeout-id='{timeout.GetProperty("id").GetInt64()}']");
            await Expect(row).ToHaveAttributeAsync("data-cause", timeout.GetProperty("cause").GetString()!);
            await Expect(row.Locator("td.cause")).ToContainTextAsync(timeout.GetProperty("confidence").GetString()!);
        }

        var timeline = page.Locator($"#timelines .timeline[data-endpoint='{_redis.EndPoint}']");
        await Expect(timeline.Locator("[data-kind='slow-command']")).Not.ToHaveCountAsync(0);
        await Expect(timeline.Locator("g.timeout")).ToHaveCountAsync(recorded.Count);
        Assert.True(errors.Count == 0, string.Join('\n', errors));
    }

    [Fact]
    public async Task The_page_is_served_with_its_own_assets_and_a_policy_that_refuses_inline_script()
    {
        using var page = await _client.GetAsync(new Uri("/muxwatch/", UriKind.Relative));
        var html = await page.Content.ReadAsStringAsync();
        Assert.Equal("text/html", page.Content.Headers.ContentType?.MediaType);
        Assert.Contains("data-api=\"/muxwatch\"", html, StringComparison.Ordinal);
        Assert.Contains("src=\"/muxwatch/muxwatch.js\"", html, StringComparison.Ordinal);
        Assert.Contains("src=\"/muxwatch/muxwatch-format.js\"", html, StringComparison.Ordinal);
        Assert.Contains("src=\"/muxwatch/muxwatch-slow-commands.js\"", html, StringComparison.Ordinal);
        Assert.Contains("src=\"/muxwatch/muxwatch-incidents.js\"", html, StringComparison.Ordinal);
        Assert.Contains("src=\"/muxwatch/muxwatch-pool.js\"", html, StringComparison.Ordinal);
        Assert.Contains("script-src 'self'", page.Headers.GetValues("Content-Security-Policy").Single(), StringComparison.Ordinal);
        Assert.DoesNotContain("unsafe-inline", page.Headers.GetValues("Content-Security-Policy").Single(), StringComparison.Ordinal);
        Assert.DoesNotContain("http", html.Replace("http-equiv", string.Empty, StringComparison.Ordinal), StringComparison.OrdinalIgnoreCase); // nothing from elsewhere
        foreach (var asset in (string[])["/muxwatch/muxwatch.js", "/muxwatch/muxwatch-format.js", "/muxwatch/muxwatch-slow-commands.js", "/muxwatch/muxwatch-incidents.js", "/muxwatch/muxwatch-pool.js", "/muxwatch/muxwatch.css"])
        {
            using var answer = await _client.GetAsync(new Uri(asset, UriKind.Relative));
            Assert.True(answer.IsSuccessStatusCode, asset);
            Assert.Equal("nosniff", answer.Headers.GetValues("X-Content-Type-Options").Single());
        }
    }

    [Fact]
    public async Task The_code_that_blocked_the_starved_pool_appears_on_the_page()
    {
        var (page, errors) = await _browser.NewPageAsync();
        await page.GotoAsync($"http://127.0.0.1:{_port}/muxwatch");
        await Expect(page.Locator("#pool-section")).ToBeHiddenAsync(); // nothing captured yet

        // This process's pool, starved until the capture is seen: 40 work items block in a checkout method on a payment that
        // the test completes at the end (a fixed two-second block ended before a capture on a loaded machine, and the test
        // waited on an unrelated capture).
        var paid = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        try
        {
            for (var i = 0; i < 40; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(_ => Checkout.WaitForPayment(paid.Task), null);
            }

            await Eventually.UntilAsync(async () =>
            {
                using var status = JsonDocument.Parse(await _client.GetStringAsync(new Uri("/muxwatch/status", UriKind.Relative)));
                return status.RootElement.GetProperty("poolStacks").GetProperty("captures").EnumerateArray()
                    .Any(capture => capture.GetProperty("sites").EnumerateArray().Any(site => site.GetProperty("method").GetString()!.Contains("Checkout.WaitForPayment", StringComparison.Ordinal)));
            }, "the starved pool's stacks captured with the checkout's", Patience);

            await Expect(page.Locator("#pool-section")).ToBeVisibleAsync();
            var site = page.Locator("#pool tr[data-blocked='true']", new() { HasText = "Checkout.WaitForPayment" });
            await Expect(site).ToContainTextAsync("blocked via .Wait()");
            await Expect(site).ToContainTextAsync(new System.Text.RegularExpressions.Regex(@"\d+ threads?"));
            // The newest capture first; a start-up or a nameless capture may sit below it (up to three in an episode).
            await Expect(page.Locator("#pool tr.capture").First).ToContainTextAsync(new System.Text.RegularExpressions.Regex(@"\d+ workers?: \d+ blocked"));
            Assert.True(errors.Count == 0, string.Join('\n', errors));
        }
        finally
        {
            paid.TrySetResult(); // the pool's threads go back
        }
    }

    /// <summary>A method of the app's that blocks its pool thread on a task (NoInlining: a frame of its own whatever the JIT decides).</summary>
    private static class Checkout
    {
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        public static void WaitForPayment(Task payment) => payment.Wait();
    }

    private async Task<List<JsonElement>?> TimeoutsAsync()
    {
        using var listed = JsonDocument.Parse(await _client.GetStringAsync(new Uri("/muxwatch/timeouts?limit=1000", UriKind.Relative)));

        // This server's only: the app's catcher sees every timeout thrown in this test process.
        return [.. listed.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("endpoint").GetString() == _redis.EndPoint).Select(t => t.Clone())];
    }

    private async Task<bool> PolledAsync()
    {
        using var events = JsonDocument.Parse(await _client.GetStringAsync(new Uri($"/muxwatch/events?endpoint={_redis.EndPoint}", UriKind.Relative)));
        return events.RootElement.GetProperty("endpoints")[0].GetProperty("polling").GetProperty("lastPollSuccess").ValueKind == JsonValueKind.String;
    }
}
