using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Tests.Live;

/// <summary>
/// Real timeouts from a real client against a real <c>redis-server</c>, caught in-process by MuxWatch
/// with no change to the calling code, and diagnosed by cause.
/// </summary>
/// <remarks>
/// The client is StackExchange.Redis 1.2.6, the newest that restores from this build's registry; its
/// messages carry no thread-pool figures, so MuxWatch's own sample at catch time decides starvation.
/// This process runs many tests at once, so its pool minimum is raised: here busy above minimum must
/// mean real starvation, not a busy test runner.
/// </remarks>
[Trait("Category", "LiveProbe")]
public sealed class TimeoutCaptureLiveTests : IAsyncLifetime
{
    private readonly CollectingLoggerProvider _logs = new();
    private readonly Prometheus.CollectorRegistry _registry = Prometheus.Metrics.NewCustomRegistry();
    private RedisServer _server = null!;
    private ConnectionMultiplexer _app = null!;
    private IHost _host = null!;

    public TimeoutCaptureLiveTests() => TestThreadPool.EnsureRoomy();

    private RecentTimeouts Recent => _host.Services.GetRequiredService<RecentTimeouts>();

    public async Task InitializeAsync()
    {
        // The slow log off: a DEBUG SLEEP stall is then explained by nothing on the server, and stays server-stall
        // (with it on, the correlator names the slow command: ServerCorrelationLiveTests).
        _server = await RedisServer.StartAsync("--slowlog-log-slower-than", "-1");
        _app = await ConnectionMultiplexer.ConnectAsync($"{_server.EndPoint},syncTimeout=500,asyncTimeout=500,abortConnect=false,connectTimeout=1000");
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders().AddProvider(_logs);

        // This process's other tests throw Redis timeouts too, and the hook sees them all: without the
        // per-cause allowance, this test's own line cannot be crowded out of the log.
        builder.Configuration["MuxWatch:TimeoutLogInterval"] = "00:00:00";
        // A dead server answers no poll: its failures settle after this, with what is known then.
        builder.Configuration["MuxWatch:CorrelationSettleTimeout"] = "00:00:02";
        builder.Services.AddMuxWatch().UseMetricsRegistry(_registry).AddMultiplexer("app", _ => _app);
        _host = builder.Build();
        await _host.StartAsync();
    }

    public async Task DisposeAsync()
    {
        await _host.StopAsync();
        _host.Dispose();
        await _app.DisposeAsync();
        _logs.Dispose();
        await _server.DisposeAsync();
    }

    [Fact]
    public async Task A_server_stall_longer_than_the_timeout_is_caught_as_server_stall()
    {
        var db = _app.GetDatabase();
        var key = $"muxwatch:stall:{_server.Port}";
        db.StringSet(key, "v");

        var sleeping = _server.CommandInBackground("DEBUG", "SLEEP", "3");
        await Eventually.UntilAsync(() => TimesOut(() => db.StringGet(key)), "a GET to time out while the server sleeps");
        await sleeping;

        // 2.x and 3.x name the key only as "next: GET key"; 3.4.35 writes qs: 0, so the live counters decide.
        var timeout = await WaitForTimeoutAsync(t => t.Report.IsTimeout && t.Report.Command == "GET" && t.Endpoint == _server.EndPoint);
        Assert.Equal(TimeoutCause.ServerStall, timeout.Diagnosis.Cause);
        Assert.Equal("first-chance", timeout.Source);
        Assert.Equal("app", timeout.Multiplexer);
        Assert.True((timeout.LiveCountersAtCatch?.SentAwaitingResponse ?? timeout.Report.Number("qs")) >= 1);
        await Eventually.UntilAsync(
            () => _logs.Lines.Any(line => line.Level == LogLevel.Warning && line.Text.Contains($"Redis timeout on {_server.EndPoint} (GET): cause server-stall", StringComparison.Ordinal)),
            "the diagnosis to be written to the app's log");
    }

    [Fact]
    public async Task A_killed_server_is_caught_as_connection_loss()
    {
        var db = _app.GetDatabase();
        var key = $"muxwatch:kill:{_server.Port}";
        db.StringSet(key, "v");

        await _server.KillAsync();
        Exception? caught = null;
        await Eventually.UntilAsync(() => (caught = FailsToConnect(() => db.StringGet(key))) is not null, "a GET to fail for want of a connection");

        // 2.x and 3.x queue the command in a backlog while disconnected: a timeout with "conn-sec: n/a", or a connection error.
        var failure = await WaitForTimeoutAsync(t => t.Report.Text == TimeoutMessageReader.Read(caught!.Message).Text);
        Assert.Equal(TimeoutCause.ConnectionLoss, failure.Diagnosis.Cause);
        Assert.True(failure.Report.Command is null or "GET", $"command {failure.Report.Command}: {failure.Report.Text}");

        // Every failure the kill caused, the app's and the probe's: nothing on the server explains them.
        var caused = Recent.Newest().Where(t => t.Endpoint == _server.EndPoint).ToList();
        Assert.All(caused, t => Assert.True(t.Diagnosis.Cause == TimeoutCause.ConnectionLoss, $"{t.Source} {t.Diagnosis.Cause}: {t.Report.Text}"));

        // Each counted once, under connection-loss, once settled. The server comes back so that the probe's
        // own failures stop arriving; then the list and the counter must agree.
        await _server.RestartAsync();
        var endpoint = ("endpoint", _server.EndPoint);
        var (listed, counted, underLoss) = (0, 0.0, 0.0);
        await Eventually.UntilAsync(async () =>
        {
            var settled = Recent.Newest().Where(t => t.Endpoint == _server.EndPoint && t.Multiplexer == "app").ToList();
            using var stream = new MemoryStream();
            await _registry.CollectAndExportAsTextAsync(stream);
            var metrics = new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
            (listed, counted, underLoss) = (settled.Count, metrics.Value("muxwatch_timeouts_total", ("multiplexer", "app"), endpoint) ?? 0,
                metrics.Value("muxwatch_timeouts_total", ("multiplexer", "app"), endpoint, ("cause", "connection-loss")) ?? 0);
            return settled.All(t => t.Settled) && listed == counted;
        }, "every failure settled and counted");
        Assert.Equal(listed, underLoss);
        Assert.All(Recent.Newest().Where(t => t.Endpoint == _server.EndPoint), t => Assert.Equal(TimeoutCause.ConnectionLoss, t.Diagnosis.Cause));
    }

    [Fact]
    public async Task Thread_pool_starvation_in_an_app_is_caught_as_starvation()
    {
        // The app starves its own pool in a child process, so this test host stays healthy.
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", "starve", _server.EndPoint));

        Assert.True(exitCode == 0, $"the app did not see a timeout (exit {exitCode}): {error}");
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        var timeouts = lines.Where(line => line.StartsWith('{')).Select(line => JsonDocument.Parse(line).RootElement).ToList();
        // Every timeout the starvation caused, not one: the app's GETs and the probe's PINGs alike. Its first
        // ones come with every thread at the minimum and hundreds queued: starvation at its start.
        var caused = timeouts.Where(t => t.GetProperty("endpoint").GetString() == _server.EndPoint).ToList();
        Assert.NotEmpty(caused);
        Assert.All(caused, t => Assert.True(t.GetProperty("cause").GetString() == "thread-pool-starvation", t.ToString()));
        Assert.Contains(caused, t => t.GetProperty("source").GetString() == "first-chance" && t.GetProperty("command").GetString() == "GET");

        // The second witness: MuxWatch's own connection, read on a thread of its own, was answered while the
        // app's requests waited, so the server is ruled out (and 3.x dropping its connection is no cause).
        Assert.Contains(caused, t => t.GetProperty("evidence").EnumerateArray().Any(e => e.GetString()!.StartsWith("thread-pool-starvation: not the server: MuxWatch's own connection was answered", StringComparison.Ordinal)));
        Assert.All(timeouts, t => Assert.True(t.GetProperty("settled").GetBoolean()));

        // Its own gauges, sampled while the pool was starved (the probe loop has a thread of its own).
        var metrics = new MetricsText(string.Join('\n', lines.Where(line => line.StartsWith("metrics: ", StringComparison.Ordinal)).Select(line => line["metrics: ".Length..])));
        var endpoint = ("endpoint", _server.EndPoint);
        Assert.Equal(caused.Count, metrics.Value("muxwatch_timeouts_total", endpoint, ("cause", "thread-pool-starvation")));
        Assert.Equal(caused.Count, metrics.Value("muxwatch_timeouts_total", endpoint)); // each once, none under another cause
        var busy = metrics.Value("muxwatch_threadpool_busy_threads", ("pool", "worker"));
        var min = metrics.Value("muxwatch_threadpool_min_threads", ("pool", "worker"));
        Assert.True(busy > min, $"worker busy {busy} above min {min} in the app's gauges: {metrics.Text}");
    }

    private static bool TimesOut(Action call)
    {
        try
        {
            call();
            return false;
        }
        catch (RedisTimeoutException)
        {
            return true;
        }
    }

    private static Exception? FailsToConnect(Action call)
    {
        try
        {
            call();
            return null;
        }
        catch (Exception ex) when (ex is RedisConnectionException or RedisTimeoutException)
        {
            return ex;
        }
    }

    /// <summary>
    /// Error replies are no timeouts, but during a failover, a load or a full memory they are what the app
    /// gets instead: counted by code (a bounded label), never recorded or counted as timeouts.
    /// </summary>
    [Fact]
    public async Task Error_replies_the_app_gets_are_counted_by_code_and_never_as_timeouts()
    {
        var database = _app.GetDatabase();
        await database.HashSetAsync("a-hash", "field", "value");
        await _server.CommandAsync("CONFIG", "SET", "maxmemory-policy", "noeviction");
        await _server.CommandAsync("CONFIG", "SET", "maxmemory", "1"); // every write now refused: OOM

        var (outOfMemory, wrongType) = (0, 0);
        for (var i = 0; i < 20; i++)
        {
            try
            {
                await database.StringSetAsync($"refused:{i}", "value");
            }
            catch (RedisServerException ex) when (ex.Message.StartsWith("OOM ", StringComparison.Ordinal))
            {
                outOfMemory++;
            }
        }

        for (var i = 0; i < 5; i++)
        {
            try
            {
                await database.StringGetAsync("a-hash");
            }
            catch (RedisServerException ex) when (ex.Message.StartsWith("WRONGTYPE ", StringComparison.Ordinal))
            {
                wrongType++;
            }
        }

        Assert.Equal((20, 5), (outOfMemory, wrongType));
        MetricsText metrics = null!;
        await Eventually.UntilAsync(async () =>
        {
            metrics = await ScrapeAsync();
            // At least: this process's other tests may get error replies too, and the hook sees them all.
            return metrics.Value("muxwatch_error_replies_total", ("error", "OOM")) >= outOfMemory
                && metrics.Value("muxwatch_error_replies_total", ("error", "other")) >= wrongType;
        }, "the OOM and WRONGTYPE replies counted, the latter as other");
        Assert.Equal(ErrorReplies.Codes.Count, metrics.Samples("muxwatch_error_replies_total").Count); // bounded: no label from a message
        Assert.Equal(0, metrics.Samples("muxwatch_timeouts_total", ("multiplexer", "app")).Sum(s => s.Value));
        Assert.DoesNotContain(Recent.Newest(), t => t.Multiplexer == "app");
    }

    private async Task<MetricsText> ScrapeAsync()
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }

    private async Task<ObservedTimeout> WaitForTimeoutAsync(Func<ObservedTimeout, bool> match)
    {
        ObservedTimeout? found = null;
        try
        {
            await Eventually.UntilAsync(
                () => (found = Recent.Newest().FirstOrDefault(match)) is not null,
                $"MuxWatch to record the exception for {_server.EndPoint}");
        }
        catch (TimeoutException ex)
        {
            var seen = string.Join("; ", Recent.Newest(10).Select(t => $"{t.Report.Kind} {t.Endpoint} {t.Diagnosis.Cause} '{t.Report.Text}'"));
            throw new TimeoutException($"{ex.Message}; recorded: [{seen}]", ex);
        }

        return found!;
    }
}
