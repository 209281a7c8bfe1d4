using System.Net;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// An app on OpenTelemetry (<c>tests/MuxWatch.OtelApp</c>: the SDK 1.20, MuxWatch's meter only, the
/// OpenTelemetry Prometheus exporter) scraped by Debian's Prometheus with the shipped rules loaded: a
/// real stall's timeouts arrive by cause under the same names the prometheus-net export uses, and the
/// shipped recording rules compute on them unchanged; and <c>dotnet-counters</c> sees the meter of the running app.
/// </summary>
public sealed class OpenTelemetryExportTests : IAsyncLifetime
{
    private static readonly string Rules = Path.Combine(BuiltProgram.RepositoryRoot, "alerts", "muxwatch.rules.yml");
    private RedisServer _redis = null!;
    private ExternalProcess? _app;
    private PrometheusProcess? _prometheusProcess;
    private HttpClient _appClient = null!;
    private PrometheusApi _prometheus = null!;

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        try
        {
            await StartAppAndPrometheusAsync();
        }
        catch
        {
            await DisposeAsync(); // xunit does not dispose a class whose initialization failed
            throw;
        }
    }

    private async Task StartAppAndPrometheusAsync()
    {
        var appPort = FreePort.Next();
        _app = ExternalProcess.Start("dotnet", BuiltProgram.PathOf("MuxWatch.OtelApp"),
            "--urls", $"http://127.0.0.1:{appPort}", "--Redis", $"{_redis.EndPoint},syncTimeout=500,asyncTimeout=500");
        _appClient = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{appPort}"), Timeout = TimeSpan.FromSeconds(30) };

        _prometheusProcess = await PrometheusProcess.StartAsync($"127.0.0.1:{appPort}", job: "otel-app", rules: Rules);
        _prometheus = _prometheusProcess.Api;
    }

    public async Task DisposeAsync()
    {
        if (_prometheusProcess is not null)
        {
            await _prometheusProcess.DisposeAsync();
        }

        if (_app is not null)
        {
            await _app.DisposeAsync();
        }

        _appClient?.Dispose();
        await _redis.DisposeAsync();
    }

    [Fact]
    public async Task Dotnet_counters_shows_the_MuxWatch_meter_of_an_app_that_only_added_MuxWatch()
    {
        // The app calls AddMuxWatch() and OpenTelemetry's AddMeter("MuxWatch"), nothing else: the meter is there,
        // and a user pointing .NET's own tool at the running process sees its multiplexer connected.
        await Eventually.UntilAsync(async () => (await TryGetAsync("/cache/warm")) == HttpStatusCode.OK, "the app to answer: " + _app!.Output, TimeSpan.FromSeconds(60));
        IReadOnlyList<JsonElement> events = [];
        await Eventually.UntilAsync(async () =>
        {
            events = await DotnetCounters.CollectAsync(_app.Id, "MuxWatch", TimeSpan.FromSeconds(3));
            return events.Any(Connected);
        }, "dotnet-counters to show muxwatch.connected for the app's multiplexer", TimeSpan.FromSeconds(60));

        Assert.All(events, e => Assert.Equal("MuxWatch", e.GetProperty("provider").GetString()));
        Assert.Contains(events, e => e.GetProperty("name").GetString()!.StartsWith("muxwatch.threadpool.", StringComparison.Ordinal));

        bool Connected(JsonElement e) => e.GetProperty("name").GetString() == "muxwatch.connected"
            && e.GetProperty("tags").GetString() == $"endpoint={_redis.EndPoint},multiplexer=cache" && e.GetProperty("value").GetDouble() == 1;
    }

    [Fact]
    public async Task A_real_stalls_timeouts_reach_Prometheus_by_cause_under_the_same_names_and_the_shipped_rules_compute_on_them()
    {
        await Eventually.UntilAsync(async () =>
            (await TryGetAsync("/cache/warm")) == HttpStatusCode.OK
            && (await _prometheus.QueryAsync("muxwatch_connected{multiplexer=\"cache\"} == 1", DateTimeOffset.UtcNow)).GetArrayLength() == 1
            && (await _prometheus.QueryAsync("muxwatch_server_last_poll_success_timestamp_seconds > 0", DateTimeOffset.UtcNow)).GetArrayLength() == 1,
            "the app to answer, and Prometheus to see its multiplexer connected and its server polled: " + _app!.Output, TimeSpan.FromSeconds(60));

        // The stall, for real: the server sleeps while the app's requests wait past their 500 ms.
        var sleeping = _redis.CommandInBackground("DEBUG", "SLEEP", "3");
        var timedOut = 0;
        while (!sleeping.IsCompleted)
        {
            if (await TryGetAsync("/cache/during-stall") == HttpStatusCode.ServiceUnavailable)
            {
                timedOut++;
            }
        }

        await sleeping;
        Assert.True(timedOut > 0, "no request of the app timed out during the stall");

        // Every one the app saw, counted under the stall's cause, as Prometheus scraped it from OpenTelemetry's exporter.
        var byCause = new Dictionary<string, double>();
        await Eventually.UntilAsync(async () =>
        {
            byCause = Values(await _prometheus.QueryAsync("sum by (cause) (muxwatch_timeouts_total{multiplexer=\"cache\",source=\"first-chance\"}) > 0", DateTimeOffset.UtcNow), "cause");
            return byCause.Values.Sum() >= timedOut;
        }, $"Prometheus to have the app's {timedOut} timeouts", TimeSpan.FromSeconds(60));
        Assert.Equal(timedOut, byCause.Values.Sum());
        Assert.All(byCause.Keys, cause => Assert.Contains(cause, (string[])["server-stall", "slow-command"]));

        // The shipped recording rules, unchanged, on the OpenTelemetry names.
        await Eventually.UntilAsync(async () =>
            (await _prometheus.QueryAsync("muxwatch:timeouts:rate5m{multiplexer=\"cache\"} > 0", DateTimeOffset.UtcNow)).GetArrayLength() > 0,
            "the recording rule muxwatch:timeouts:rate5m to see the stall");
        Assert.NotEqual(0, (await _prometheus.QueryAsync("muxwatch:threadpool_busy_above_min", DateTimeOffset.UtcNow)).GetArrayLength());

        // The families the alerts and dashboards read, under their prometheus-net names.
        foreach (var family in (string[])["muxwatch_connected", "muxwatch_sent_awaiting_response", "muxwatch_heartbeat_age_seconds",
                     "muxwatch_last_probe_success_timestamp_seconds", "muxwatch_ping_seconds_bucket", "muxwatch_threadpool_busy_threads",
                     "muxwatch_server_rdb_last_bgsave_ok", "muxwatch_server_latest_fork_seconds", "muxwatch_server_slowlog_entries_total"])
        {
            Assert.True((await _prometheus.QueryAsync(family, DateTimeOffset.UtcNow)).GetArrayLength() > 0, $"{family} is not in the OpenTelemetry scrape");
        }
    }

    private async Task<HttpStatusCode?> TryGetAsync(string path)
    {
        try
        {
            using var response = await _appClient.GetAsync(new Uri(path, UriKind.Relative));
            return response.StatusCode;
        }
        catch (HttpRequestException)
        {
            return null;
        }
    }

    private static Dictionary<string, double> Values(JsonElement result, string label) =>
        result.EnumerateArray().ToDictionary(
            r => r.GetProperty("metric").GetProperty(label).GetString()!,
            r => double.Parse(r.GetProperty("value")[1].GetString()!, System.Globalization.CultureInfo.InvariantCulture));
}
