using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The whole path with real parts on loopback: redis-server stalls, the MuxWatch service (a process)
/// probes it, Debian's Prometheus scrapes the service every second and evaluates the shipped rules,
/// Debian's Alertmanager pages a webhook this test runs; then the stall ends and the page resolves.
/// The dashboards' queries run against what Prometheus scraped.
/// </summary>
/// <remarks>
/// The shipped rules are used as they are but for their <c>for:</c> durations, cut to 10 s in a temporary copy
/// (and the evaluation interval, in the temporary Prometheus configuration): what is proven here is the path
/// from a real stall to a page and its resolution. The shipped durations themselves are proven by the rule
/// tests (alerts/tests, run with promtool), which step through them minute by minute. Kept, this test took
/// about five minutes, a fifth of the test command's time.
/// </remarks>
[Trait("Category", "EndToEnd")]
[TakesMinutes]
[StartsFirst]
public sealed class EndToEndTests(ITestOutputHelper output) : IAsyncLifetime
{
    private readonly string _work = Directory.CreateTempSubdirectory("muxwatch-e2e-").FullName;
    private readonly List<IAsyncDisposable> _running = [];
    private RedisServer _spiking = null!;
    private RedisServer _blip = null!;
    private RedisServer _restarting = null!;
    private ServiceProcess _service = null!;
    private PagingAlertmanager _pager = null!;
    private PrometheusProcess _prometheusProcess = null!;
    private PrometheusApi _prometheus = null!;

    public async Task InitializeAsync()
    {
        // The latency monitor on (as docs/diagnosis.md advises): the spike panels have a real source.
        _spiking = await RedisServer.StartAsync("--latency-monitor-threshold", "100");
        _blip = await RedisServer.StartAsync();
        _restarting = await RedisServer.StartAsync();
        _service = await ServiceProcess.StartAsync(
            "--MuxWatch:ProbeInterval=00:00:00.200", "--MuxWatch:PingInterval=00:00:00.200",
            "--MuxWatch:ServerPollInterval=00:00:00.500",
            "--MuxWatch:ServerPollTimeout=00:00:01",
            "--MuxWatch:Targets:0:Name=spiking", $"--MuxWatch:Targets:0:ConnectionString={_spiking.EndPoint},asyncTimeout=300,syncTimeout=300",
            "--MuxWatch:Targets:1:Name=blip", $"--MuxWatch:Targets:1:ConnectionString={_blip.EndPoint},asyncTimeout=300,syncTimeout=300",
            "--MuxWatch:Targets:2:Name=restarting", $"--MuxWatch:Targets:2:ConnectionString={_restarting.EndPoint},connectTimeout=1000");

        // Alertmanager pages this test's webhook at once, every alert in a group of its own.
        _pager = await PagingAlertmanager.StartAsync(_work, webhook => $"""
            route:
              receiver: pager
              group_by: [alertname, instance, multiplexer, endpoint]
              group_wait: 1s
              group_interval: 1s
              repeat_interval: 1h
            receivers:
              - name: pager
                webhook_configs:
                  - url: {webhook}
                    send_resolved: true
            """);
        _running.Add(_pager);

        var rules = await PagingAlertmanager.WriteRulesWithShortForAsync(_work);
        _prometheusProcess = await PrometheusProcess.StartAsync($"127.0.0.1:{_service.Port}", rules: rules, alertmanager: _pager.Address);
        _running.Add(_prometheusProcess);
        _prometheus = _prometheusProcess.Api;
    }

    public async Task DisposeAsync()
    {
        foreach (var process in _running)
        {
            await process.DisposeAsync();
        }

        await _service.DisposeAsync();
        await _spiking.DisposeAsync();
        await _blip.DisposeAsync();
        await _restarting.DisposeAsync();
        Directory.Delete(_work, recursive: true);
    }

    [Fact]
    public async Task A_timeout_spike_pages_with_endpoint_and_cause_then_resolves_a_blip_never_pages_and_every_dashboard_shows_the_scrape()
    {
        var started = DateTimeOffset.UtcNow;
        await Eventually.UntilAsync(async () => (await _prometheus.QueryAsync("muxwatch_connected == 1", DateTimeOffset.UtcNow)).GetArrayLength() == 3,
            "Prometheus to scrape the three targets connected");

        // A blip: one short stall on the other server. It must never page.
        await _blip.CommandAsync("DEBUG", "SLEEP", "1");

        // A real BGSAVE, then an AOF rewrite (scheduled behind it), each about 2 s: the persistence
        // panels and annotations have a real source.
        await _spiking.CommandAsync("DEBUG", "POPULATE", "2000");
        await _spiking.CommandAsync("CONFIG", "SET", "rdb-key-save-delay", "1000");
        await _spiking.CommandAsync("BGSAVE");
        await _spiking.CommandAsync("BGREWRITEAOF");
        await Eventually.UntilAsync(async () =>
            (await _prometheus.QueryAsync("muxwatch_server_aof_rewrite_in_progress == 1", DateTimeOffset.UtcNow)).GetArrayLength() > 0,
            "Prometheus to see the AOF rewrite that follows the BGSAVE");

        // A server that dies and comes back: the disconnection panels and annotations have a real source.
        await _restarting.KillAsync();
        await Eventually.UntilAsync(async () =>
            (await _prometheus.QueryAsync("muxwatch_connected{multiplexer=\"restarting\"} == 0", DateTimeOffset.UtcNow)).GetArrayLength() > 0,
            "Prometheus to see the killed server disconnected");
        await _restarting.RestartAsync();

        // The spike: the server stalls again and again, longer than the client timeouts, until the page arrives.
        using var stop = new CancellationTokenSource();
        var stalls = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                await _spiking.CommandAsync("DEBUG", "SLEEP", "1.5");
                await Task.Delay(100, CancellationToken.None);
            }
        });

        var spikingEndpoint = _spiking.EndPoint;
        await Eventually.UntilAsync(async () =>
            (await _prometheus.QueryAsync($"sum(muxwatch_timeouts_total{{endpoint=\"{spikingEndpoint}\"}}) > 0", DateTimeOffset.UtcNow)).GetArrayLength() > 0,
            "muxwatch_timeouts_total to rise in Prometheus");

        var firing = await NotificationAsync("firing", spikingEndpoint, TimeSpan.FromMinutes(6));
        var pagedAt = DateTimeOffset.UtcNow;
        await stop.CancelAsync();
        await stalls;
        output.WriteLine($"paged {(pagedAt - started).TotalSeconds:0} s after the start");

        var labels = firing.GetProperty("labels");
        Assert.Equal("MuxWatchTimeoutSpike", labels.GetProperty("alertname").GetString());
        Assert.Equal("critical", labels.GetProperty("severity").GetString());
        Assert.Equal("spiking", labels.GetProperty("multiplexer").GetString());
        var cause = labels.GetProperty("cause").GetString();
        Assert.Contains(cause, (string[])["slow-command", "server-stall", "persistence"]);
        var annotations = firing.GetProperty("annotations");
        Assert.Contains($"spiking / {spikingEndpoint}, mostly {cause}", annotations.GetProperty("summary").GetString(), StringComparison.Ordinal);
        var runbook = annotations.GetProperty("runbook_url").GetString()!;
        Assert.True(File.Exists(Path.Combine(BuiltProgram.RepositoryRoot, runbook)), $"{runbook} is no file of the repository");
        // The page the person paged lands on: the sidecar's status page, on this endpoint's newest incident.
        var pageUrl = annotations.GetProperty("page_url").GetString()!;
        Assert.Equal($"http://{labels.GetProperty("instance").GetString()}/?endpoint={Uri.EscapeDataString(spikingEndpoint)}", pageUrl);
        using (var page = await _service.Client.GetAsync(new Uri(pageUrl)))
        {
            Assert.Equal("text/html", page.Content.Headers.ContentType?.MediaType);
        }

        // The stall is over: the page resolves.
        await NotificationAsync("resolved", spikingEndpoint, TimeSpan.FromMinutes(5));
        output.WriteLine($"resolved {(DateTimeOffset.UtcNow - pagedAt).TotalSeconds:0} s after the page");

        // The blip never paged (an info alert may name it: with the durations cut, its latency monitor being off is one).
        Assert.DoesNotContain(_pager.Alerts("firing"),
            alert => alert.GetProperty("labels").TryGetProperty("endpoint", out var endpoint) && endpoint.GetString() == _blip.EndPoint
                && alert.GetProperty("labels").GetProperty("severity").GetString() == "critical");

        await EveryDashboardShowsTheScrapeAsync(started);
    }

    /// <summary>Every panel, annotation and variable query returns data from the real scrape: this run produces a source for each.</summary>
    private async Task EveryDashboardShowsTheScrapeAsync(DateTimeOffset started)
    {
        // A one-second step, the scrape interval, as Grafana uses for a range this short: a two-second
        // disconnection falls between coarser steps.
        var queries = new DashboardQueries(_prometheus, started, DateTimeOffset.UtcNow, TimeSpan.FromSeconds(1), "30s");
        var failures = new List<string>();
        var checkedQueries = 0;
        // The roles-and-failovers dashboard needs a cluster and a failover: TopologyDashboardTests scrapes those.
        foreach (var file in Directory.EnumerateFiles(DashboardQueries.Folder, "*.json").Where(f => Path.GetFileName(f) != TopologyDashboardTests.Dashboard))
        {
            using var document = JsonDocument.Parse(await File.ReadAllTextAsync(file));
            foreach (var outcome in await queries.RunAsync(document.RootElement))
            {
                checkedQueries++;
                if (!outcome.HasData)
                {
                    failures.Add($"{Path.GetFileName(file)} {outcome.Source}: no data for {outcome.Expr}");
                }
            }
        }

        output.WriteLine($"{checkedQueries} dashboard queries run against the real scrape");
        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    private async Task<JsonElement> NotificationAsync(string status, string endpoint, TimeSpan timeout)
    {
        JsonElement found = default;
        await Eventually.UntilAsync(() =>
        {
            foreach (var alert in _pager.Alerts(status))
            {
                if (alert.GetProperty("labels").TryGetProperty("endpoint", out var e) && e.GetString() == endpoint
                    && PagingAlertmanager.Name(alert) == "MuxWatchTimeoutSpike")
                {
                    found = alert;
                    return true;
                }
            }

            return false;
        }, $"a {status} MuxWatchTimeoutSpike page for {endpoint} (Prometheus: {_prometheusProcess.Output.Length} chars of log, Alertmanager alive: {_pager.IsRunning})", timeout);
        return found;
    }
}
