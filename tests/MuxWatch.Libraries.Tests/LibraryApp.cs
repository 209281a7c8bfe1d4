using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Testing.Apps;

/// <summary>
/// An ASP.NET Core app like a user's, on a loopback port: its services as the test gives them, MuxWatch added
/// with <c>AddMuxWatch()</c> and nothing more (its own metrics registry, so that tests running side by side
/// keep their series apart), its JSON API and <c>/metrics</c> mapped. Read as a user reads it: over HTTP.
/// </summary>
internal sealed class LibraryApp : IAsyncDisposable
{
    private readonly WebApplication _app;

    private LibraryApp(WebApplication app, HttpClient client)
    {
        _app = app;
        Client = client;
    }

    public HttpClient Client { get; }

    public IServiceProvider Services => _app.Services;

    public static async Task<LibraryApp> StartAsync(Action<IServiceCollection> services, Action<WebApplicationBuilder>? configure = null)
    {
        var port = FreePort.Next();
        var builder = WebApplication.CreateBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:01";
        builder.Configuration["MuxWatch:ServerPollInterval"] = "00:00:01";

        // A PING and a poll a second whether the test's process is busy or quiet: these tests count them (the quiet
        // process's slower pace is QuietPingCadenceLiveTests' and QuietPollCadenceLiveTests').
        builder.Configuration["MuxWatch:PingQuietMultiple"] = "1";
        builder.Configuration["MuxWatch:ServerPollQuietMultiple"] = "1";
        configure?.Invoke(builder);
        services(builder.Services);
        builder.Services.AddMuxWatch().UseMetricsRegistry(Metrics.NewCustomRegistry());
        var app = builder.Build();
        app.MapMuxWatchApi();
        app.MapMuxWatchMetrics();
        await app.StartAsync();
        return new LibraryApp(app, new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}") });
    }

    /// <summary>The targets <c>/muxwatch/targets</c> lists with a server at <paramref name="endpoint"/>.</summary>
    public async Task<IReadOnlyList<JsonElement>> TargetsOnAsync(string endpoint)
    {
        using var document = JsonDocument.Parse(await Client.GetStringAsync(new Uri("/muxwatch/targets", UriKind.Relative)));
        return [.. document.RootElement.GetProperty("targets").EnumerateArray()
            .Where(t => t.GetProperty("servers").EnumerateArray().Any(s => s.GetProperty("endpoint").GetString() == endpoint))
            .Select(t => t.Clone())];
    }

    /// <summary>Every timeout <c>/muxwatch/timeouts</c> lists on <paramref name="endpoint"/>.</summary>
    public async Task<IReadOnlyList<JsonElement>> TimeoutsOnAsync(string endpoint)
    {
        using var document = JsonDocument.Parse(await Client.GetStringAsync(new Uri("/muxwatch/timeouts?limit=1000", UriKind.Relative)));
        return [.. document.RootElement.GetProperty("timeouts").EnumerateArray()
            .Where(t => t.TryGetProperty("endpoint", out var e) && e.GetString() == endpoint)
            .Select(t => t.Clone())];
    }

    /// <summary>
    /// Waits until every target on <paramref name="endpoint"/> is connected and its server polled: what an app that
    /// has run a while has, and what a test of a stall's cause needs (a timeline to read the stall from).
    /// </summary>
    public Task UntilPolledAsync(string endpoint, int targets) => Eventually.UntilAsync(async () =>
    {
        var found = await TargetsOnAsync(endpoint);
        return found.Count == targets && found.All(t => t.GetProperty("state").GetString() == "connected"
            && t.GetProperty("servers")[0].GetProperty("polling") is { ValueKind: JsonValueKind.Object } polling
            && polling.GetProperty("lastPollSuccess").ValueKind == JsonValueKind.String);
    }, $"{targets} multiplexer(s) on {endpoint} watched, connected and their server polled");

    public Task<MetricsText> ScrapeAsync() => MetricsText.ScrapeAsync(Client);

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
