using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The fleet as a witness, for real: three replicas of a user's web app with MuxWatch in-process (two on this build's
/// client, one the sample app on the packed packages and the other client generation) and the sidecar, all on one
/// redis-server, scraped by one real Prometheus evaluating the shipped rules, paging through a real Alertmanager with the
/// shipped routes and inhibition. A server stall pages once, server side, naming four of four; one replica's own starved
/// pool pages for that replica alone, and its incident says, from Prometheus, that the others were answered; a killed
/// server pages server side.
/// </summary>
/// <remarks>
/// The rules' <c>for:</c> durations are cut to 10 s in a temporary copy, and Alertmanager's group waits to a second, as in
/// EndToEndTests: what is proven here is the path; the shipped durations are the promtool tests'.
/// </remarks>
[Trait("Category", "EndToEnd")]
[TakesMinutes]
[StartsFirst]
public sealed class FleetEndToEndTests(PackedMuxWatch packed, ITestOutputHelper output) : IClassFixture<PackedMuxWatch>, IAsyncLifetime
{
    private readonly string _work = Directory.CreateTempSubdirectory("muxwatch-fleet-").FullName;
    private readonly List<IAsyncDisposable> _running = [];
    private readonly CancellationTokenSource _stopTraffic = new();
    private RedisServer _redis = null!;
    private PagingAlertmanager _pager = null!;
    private PrometheusProcess _prometheus = null!;
    private Replica _starving = null!;
    private Replica _served = null!;
    private Replica _otherGeneration = null!;
    private ServiceProcess _sidecar = null!;
    private Task _sampleTraffic = Task.CompletedTask;

    private sealed record Replica(string Name, int Port, ExternalProcess Process, HttpClient Client) : IAsyncDisposable
    {
        public string Instance => $"127.0.0.1:{Port}";

        public async ValueTask DisposeAsync()
        {
            Client.Dispose();
            await Process.DisposeAsync();
        }
    }

    public async Task InitializeAsync()
    {
        try
        {
            await StartAllAsync();
        }
        catch
        {
            await DisposeAsync(); // xunit does not dispose a class whose initialization failed: nothing may be left running
            throw;
        }
    }

    private async Task StartAllAsync()
    {
        _redis = await RedisServer.StartAsync();
        var connection = $"{_redis.EndPoint},asyncTimeout=500,syncTimeout=500";

        // The shipped routes and inhibition, paging this test's webhook at once.
        var shipped = await File.ReadAllTextAsync(Path.Combine(BuiltProgram.RepositoryRoot, "deploy", "alertmanager", "alertmanager.yml"));
        _pager = await PagingAlertmanager.StartAsync(_work, webhook => shipped
            .Replace("http://localhost:9095/page", webhook.ToString(), StringComparison.Ordinal)
            .Replace("group_wait: 30s", "group_wait: 1s", StringComparison.Ordinal)
            .Replace("group_interval: 5m", "group_interval: 1s", StringComparison.Ordinal));
        _running.Add(_pager);

        // Prometheus first (the replicas are told its address), scraping the four instances from the moment they are up.
        int starvingPort = FreePort.Next(), servedPort = FreePort.Next(), otherPort = FreePort.Next(), sidecarPort = FreePort.Next();
        var rules = await PagingAlertmanager.WriteRulesWithShortForAsync(_work);
        _prometheus = await PrometheusProcess.StartAsync(
            [.. new[] { starvingPort, servedPort, otherPort, sidecarPort }.Select(port => $"127.0.0.1:{port}")],
            rules: rules, alertmanager: _pager.Address);
        _running.Add(_prometheus);

        // Every replica reads the fleet for its incidents, 5 s after their last timeout (Prometheus scrapes and evaluates every second).
        string[] fleet = [$"--MuxWatch:FleetPrometheusUrl={_prometheus.Address}", "--MuxWatch:FleetReadDelay=00:00:05"];
        _starving = Start("starving", starvingPort, "dotnet", [BuiltProgram.PathOf("MuxWatch.FleetApp"), "--Redis", connection, .. fleet]);
        _served = Start("served", servedPort, "dotnet", [BuiltProgram.PathOf("MuxWatch.FleetApp"), "--Redis", connection, .. fleet]);
        var otherVersion = typeof(StackExchange.Redis.ConnectionMultiplexer).Assembly.GetName().Version!.Major >= 3 ? "2.6.90" : "3.4.35";
        var sample = await packed.BuildSampleAsync(otherVersion);
        _otherGeneration = Start($"sample on {otherVersion}", otherPort, "dotnet", [Path.Combine(sample, "MuxWatch.Sample.dll"), "--Redis", connection, .. fleet]);
        _sidecar = await ServiceProcess.StartOnAsync(sidecarPort, new Dictionary<string, string>(), "--MuxWatch:PingInterval=00:00:00.200",
            "--MuxWatch:Targets:0:Name=cache", $"--MuxWatch:Targets:0:ConnectionString={connection}");

        // The sample app has no traffic of its own: its users read the cache through it.
        _sampleTraffic = Task.WhenAll(Enumerable.Range(0, 4).Select(async i =>
        {
            while (!_stopTraffic.IsCancellationRequested)
            {
                try
                {
                    using var response = await _otherGeneration.Client.GetAsync(new Uri($"/cache/user-{i}", UriKind.Relative), _stopTraffic.Token);
                    await Task.Delay(100, _stopTraffic.Token);
                }
                catch (Exception ex) when (ex is HttpRequestException or OperationCanceledException)
                {
                    if (_stopTraffic.IsCancellationRequested)
                    {
                        return;
                    }
                }
            }
        }));
    }

    private Replica Start(string name, int port, string program, string[] arguments)
    {
        var process = ExternalProcess.Start(program, [.. arguments, "--urls", $"http://127.0.0.1:{port}"]);
        var replica = new Replica(name, port, process, new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(10) });
        _running.Add(replica);
        return replica;
    }

    public async Task DisposeAsync()
    {
        await _stopTraffic.CancelAsync();
        await _sampleTraffic;
        foreach (var running in Enumerable.Reverse(_running))
        {
            await running.DisposeAsync();
        }

        if (_sidecar is not null)
        {
            await _sidecar.DisposeAsync();
        }

        if (_redis is not null)
        {
            await _redis.DisposeAsync();
        }

        _stopTraffic.Dispose();
        Directory.Delete(_work, recursive: true);
    }

    [Fact]
    public async Task A_stall_pages_once_server_side_one_starved_replica_pages_alone_with_the_fleet_on_its_incident_and_a_killed_server_pages_server_side()
    {
        var endpoint = _redis.EndPoint;
        var started = DateTimeOffset.UtcNow;
        await Eventually.UntilAsync(async () => await ValueAsync($"muxwatch:fleet_instances_watching:1m{{endpoint=\"{endpoint}\"}}") == 4,
            "Prometheus to see the three replicas and the sidecar watching the server", TimeSpan.FromMinutes(2));

        // (1) The server stalls again and again, past every client's 500 ms: every instance is affected.
        using (var stop = new CancellationTokenSource())
        {
            var stalls = Task.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    await _redis.CommandAsync("DEBUG", "SLEEP", "1.5");
                    await Task.Delay(200, CancellationToken.None);
                }
            });
            var serverSide = await PageAsync("firing", "MuxWatchServerSideTimeouts", labels => labels.GetProperty("endpoint").GetString() == endpoint, TimeSpan.FromMinutes(3));
            // It pages once most are affected; the last instance's first timeout may come a scrape later: all four are.
            await Eventually.UntilAsync(async () => await ValueAsync($"muxwatch:fleet_instances_affected:1m{{endpoint=\"{endpoint}\"}}") == 4,
                "all four instances to be affected by the stall", TimeSpan.FromMinutes(1));
            await stop.CancelAsync();
            await stalls;
            output.WriteLine($"stall: paged server side {(DateTimeOffset.UtcNow - started).TotalSeconds:0} s after the start: {serverSide.GetProperty("annotations").GetProperty("summary")}");

            Assert.False(serverSide.GetProperty("labels").TryGetProperty("instance", out _), "a server-side page names no instance");
            Assert.Matches(@": [34] of 4 instances timed out or lost it", serverSide.GetProperty("annotations").GetProperty("summary").GetString());
            Assert.Contains(serverSide.GetProperty("labels").GetProperty("cause").GetString(), (string[])["server-stall", "slow-command"]);
        }

        // One page for the stall: no per-instance spike or instance-side page paged beside it (the rules stand aside, the inhibition holds).
        Assert.DoesNotContain(_pager.Alerts("firing"), alert => PagingAlertmanager.Name(alert) is "MuxWatchTimeoutSpike" or "MuxWatchInstanceSideTimeouts");

        // The stall's minute leaves the rules' window before one replica starves alone.
        await Eventually.UntilAsync(async () => await ValueAsync($"muxwatch:fleet_instances_affected:1m{{endpoint=\"{endpoint}\"}}") == 0,
            "the stall to leave the fleet's one-minute window", TimeSpan.FromMinutes(3));

        // (2) One replica's checkout blocks its own pool (sync over async): nobody else's.
        var starvedAt = DateTimeOffset.UtcNow;
        using (var blocked = await _starving.Client.PostAsync(new Uri("/checkout/block?seconds=10", UriKind.Relative), content: null))
        {
            Assert.Equal(System.Net.HttpStatusCode.Accepted, blocked.StatusCode);
        }

        var instanceSide = await PageAsync("firing", "MuxWatchInstanceSideTimeouts", labels => labels.GetProperty("endpoint").GetString() == endpoint, TimeSpan.FromMinutes(3));
        output.WriteLine($"starvation: paged instance side {(DateTimeOffset.UtcNow - starvedAt).TotalSeconds:0} s after it began: {instanceSide.GetProperty("annotations").GetProperty("description")}");
        Assert.Equal(_starving.Instance, instanceSide.GetProperty("labels").GetProperty("instance").GetString());
        Assert.All(_pager.Alerts("firing").Where(alert => PagingAlertmanager.Name(alert) == "MuxWatchInstanceSideTimeouts"),
            alert => Assert.Equal(_starving.Instance, alert.GetProperty("labels").GetProperty("instance").GetString()));
        Assert.Single(_pager.Alerts("firing"), alert => PagingAlertmanager.Name(alert) == "MuxWatchServerSideTimeouts"); // the stall's, still the only one

        // Its incident says, from Prometheus, that the others were answered, and that this agrees with the starvation.
        JsonElement incident = default;
        var incidents = string.Empty;
        try
        {
            await Eventually.UntilAsync(async () =>
            {
                incidents = await _starving.Client.GetStringAsync(new Uri($"/muxwatch/incidents?endpoint={Uri.EscapeDataString(endpoint)}", UriKind.Relative));
                using var answer = JsonDocument.Parse(incidents);
                incident = answer.RootElement.GetProperty("incidents").EnumerateArray()
                    .FirstOrDefault(i => DateTimeOffset.Parse(i.GetProperty("lastTimeout").GetString()!, System.Globalization.CultureInfo.InvariantCulture) >= starvedAt).Clone();
                return incident.ValueKind == JsonValueKind.Object && incident.TryGetProperty("fleet", out var fleet) && fleet.ValueKind == JsonValueKind.Object
                    && fleet.GetProperty("verdict").GetString() == "instance-side";
            }, "the starved replica's incident to carry the fleet's instance-side reading", TimeSpan.FromMinutes(2));
        }
        catch (TimeoutException timedOut)
        {
            throw new TimeoutException($"{timedOut.Message}; its incidents: {incidents}", timedOut);
        }
        var reading = incident.GetProperty("fleet");
        output.WriteLine($"the starved replica's incident: {incident.GetProperty("cause")}; fleet: {reading.GetProperty("text")}. {reading.GetProperty("weighing")}");
        Assert.Equal("thread-pool-starvation", incident.GetProperty("cause").GetString());
        Assert.StartsWith($"1 of 4 instances watching {endpoint}", reading.GetProperty("text").GetString(), StringComparison.Ordinal);
        Assert.True(reading.GetProperty("agrees").GetBoolean());

        // (3) The server is killed: every instance loses it; server side again.
        var killedAt = DateTimeOffset.UtcNow;
        await _redis.KillAsync();
        var killed = await PageAsync("firing", "MuxWatchServerSideTimeouts",
            labels => labels.GetProperty("endpoint").GetString() == endpoint, TimeSpan.FromMinutes(3), after: killedAt);
        output.WriteLine($"kill: paged server side {(DateTimeOffset.UtcNow - killedAt).TotalSeconds:0} s after it: {killed.GetProperty("annotations").GetProperty("summary")}");
        Assert.Matches(@": [34] of 4 instances timed out or lost it", killed.GetProperty("annotations").GetProperty("summary").GetString());
        // Named by what happened in its minute, never by the starved replica's burst a minute or two before it.
        Assert.NotEqual("thread-pool-starvation", killed.GetProperty("labels").TryGetProperty("cause", out var cause) ? cause.GetString() : null);

        // The overview dashboard's fleet panels show all three on the real scrape (the recorded series, which Prometheus
        // never evaluates over the dashboards tests' backfilled blocks).
        var queries = new DashboardQueries(_prometheus.Api, started, DateTimeOffset.UtcNow, TimeSpan.FromSeconds(1), "30s");
        using var overview = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(DashboardQueries.Folder, "muxwatch-overview.json")));
        var fleetPanels = (await queries.RunAsync(overview.RootElement)).Where(o => o.Source.StartsWith("panel 'Fleet:", StringComparison.Ordinal)).ToList();
        Assert.NotEmpty(fleetPanels);
        Assert.All(fleetPanels, query => Assert.True(query.HasData, $"{query.Source}: no data for {query.Expr}"));
    }

    private async Task<double?> ValueAsync(string query)
    {
        var result = await _prometheus.Api.QueryAsync(query, DateTimeOffset.UtcNow);
        return result.GetArrayLength() == 0 ? null : double.Parse(result[0].GetProperty("value")[1].GetString()!, System.Globalization.CultureInfo.InvariantCulture);
    }

    private async Task<JsonElement> PageAsync(string status, string alertname, Func<JsonElement, bool> matches, TimeSpan timeout, DateTimeOffset? after = null)
    {
        JsonElement found = default;
        await Eventually.UntilAsync(() =>
        {
            foreach (var alert in _pager.Alerts(status).Where(alert => PagingAlertmanager.Name(alert) == alertname && matches(alert.GetProperty("labels"))))
            {
                if (after is null || DateTimeOffset.Parse(alert.GetProperty("startsAt").GetString()!, System.Globalization.CultureInfo.InvariantCulture) >= after)
                {
                    found = alert;
                    return true;
                }
            }

            return false;
        }, $"a {status} {alertname} page (notifications so far: {_pager.Notifications.Count}; Prometheus log {_prometheus.Output.Length} chars)", timeout);
        return found;
    }
}
