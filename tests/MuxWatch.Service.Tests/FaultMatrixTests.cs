using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Service.Tests;

/// <summary>
/// The probe's fault matrix: one target faulty in a given way next to a healthy one. Throughout,
/// <c>/metrics</c> and <c>/healthz</c> answer, no probe cycle runs longer than a second (the loop never
/// waits on the network), the healthy target keeps being probed on time, the fault shows in the
/// metrics and <c>/api/targets</c>, and where the fault can end, recovery is seen.
/// </summary>
public sealed class FaultMatrixTests(ITestOutputHelper output) : IAsyncLifetime
{
    private readonly List<IAsyncDisposable> _owned = [];
    private readonly CancellationTokenSource _listeners = new();
    private RedisServer _healthy = null!;

    public async Task InitializeAsync() => _healthy = await RedisServer.StartAsync();

    public async Task DisposeAsync()
    {
        await _listeners.CancelAsync();
        foreach (var owned in _owned)
        {
            await owned.DisposeAsync();
        }

        await _healthy.DisposeAsync();
        _listeners.Dispose();
    }

    public static TheoryData<string> Faults() =>
    [
        "not-running-at-start", "wrong-password", "unresolvable-host", "garbage-listener", "silent-listener",
        "tls-expected-not-offered", "tls-offered-not-expected", "client-pause", "debug-sleep",
    ];

    [Theory]
    [MemberData(nameof(Faults))]
    public async Task A_faulty_endpoint_shows_costs_the_others_nothing_and_recovers(string fault)
    {
        var (connectionString, stall, recover) = await SetUpAsync(fault);
        await using var sidecar = InMemorySidecar.Probing(("healthy", _healthy.EndPoint), ("faulty", $"{connectionString},connectTimeout=1000,asyncTimeout=500,syncTimeout=500"));
        if (stall is not null)
        {
            await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) >= 1, "the faulty target's first PING");
            _ = Task.Run(stall);
        }

        // During the fault: everything answers, the healthy target is probed on time, the fault shows.
        var healthyProbes = new HashSet<double>();
        await Eventually.UntilAsync(async () =>
        {
            Assert.True((await sidecar.Client.GetAsync(new Uri("/healthz", UriKind.Relative))).IsSuccessStatusCode, "/healthz failed during the fault");
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            AssertNoSlowCycle(metrics);
            if (metrics.Value("muxwatch_last_probe_success_timestamp_seconds", ("multiplexer", "healthy")) is { } last)
            {
                healthyProbes.Add(last);
            }

            return healthyProbes.Count >= 5 && await FaultShowsAsync(sidecar, metrics, stall is not null);
        }, $"{fault}: the fault to show while the healthy target is probed on");

        if (recover is null)
        {
            output.WriteLine($"{fault}: shown, the other target probed {healthyProbes.Count} times meanwhile; no recovery to wait for");
            return;
        }

        await recover();
        var pingsAfter = (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) ?? 0;
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            AssertNoSlowCycle(metrics);
            return metrics.Value("muxwatch_connected", ("multiplexer", "faulty")) == 1
                && metrics.Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) > pingsAfter + 2;
        }, $"{fault}: the faulty target to recover", TimeSpan.FromSeconds(60));
        output.WriteLine($"{fault}: shown, then recovered");
    }

    [Fact]
    public async Task Two_hundred_endpoints_half_of_them_dead_keep_the_cycle_short_and_the_live_ones_on_time()
    {
        var targets = Enumerable.Range(0, 200)
            .Select(i => ($"t{i:000}", i % 2 == 0 ? _healthy.EndPoint : $"127.0.0.1:{FreePort.Next()},connectTimeout=1000"))
            .ToArray();
        await using var sidecar = InMemorySidecar.Probing(targets);

        var live = new HashSet<double>();
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            AssertNoSlowCycle(metrics);
            if (metrics.Value("muxwatch_last_probe_success_timestamp_seconds", ("multiplexer", "t198")) is { } last)
            {
                live.Add(last);
            }

            return live.Count >= 5 && metrics.Samples("muxwatch_connected").Count(s => s.Value == 1) >= 100;
        }, "the hundred live endpoints probed on time", TimeSpan.FromSeconds(90));

        var final = await MetricsText.ScrapeAsync(sidecar.Client);
        var cycles = final.Value("muxwatch_probe_cycle_seconds_count")!.Value;
        var mean = final.Value("muxwatch_probe_cycle_seconds_sum")!.Value / cycles;
        output.WriteLine($"200 endpoints, 100 dead: {cycles} cycles, mean {mean * 1000:0.0} ms");
        Assert.Equal(100, final.Samples("muxwatch_connected").Count(s => s.Value == 1 && s.Labels["multiplexer"].StartsWith('t')));
    }

    private static void AssertNoSlowCycle(MetricsText metrics)
    {
        var count = metrics.Value("muxwatch_probe_cycle_seconds_count") ?? 0;
        var withinOneSecond = metrics.Value("muxwatch_probe_cycle_seconds_bucket", ("le", "1")) ?? metrics.Value("muxwatch_probe_cycle_seconds_bucket", ("le", "1.0")) ?? count;
        Assert.True(withinOneSecond == count, $"{count - withinOneSecond} probe cycles took longer than a second");
    }

    private static async Task<bool> FaultShowsAsync(InMemorySidecar sidecar, MetricsText metrics, bool isStall)
    {
        if (isStall)
        {
            return metrics.Samples("muxwatch_ping_failures_total", ("multiplexer", "faulty")).Sum(s => s.Value) >= 1
                || metrics.Value("muxwatch_timeouts_total", ("multiplexer", "faulty")) >= 1;
        }

        using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
        var faulty = targets.RootElement.GetProperty("targets").EnumerateArray().Single(t => t.GetProperty("name").GetString() == "faulty");
        return metrics.Value("muxwatch_connected", ("multiplexer", "faulty")) is null or 0
            && faulty.GetProperty("state").GetString() != "connected";
    }

    /// <summary>The faulty target's connection string, what stalls it (for faults that are stalls), and what ends the fault.</summary>
    private async Task<(string ConnectionString, Func<Task>? Stall, Func<Task>? Recover)> SetUpAsync(string fault)
    {
        switch (fault)
        {
            case "not-running-at-start":
                var port = FreePort.Next();
                return ($"127.0.0.1:{port}", null, async () => _owned.Add(await RedisServer.StartOnAsync(port)));
            case "wrong-password":
                var locked = await OwnAsync(await RedisServer.StartAsync("--requirepass", "the-right-one-1234"));
                return ($"{locked.EndPoint},password=a-wrong-one-5678", null, () => locked.CommandAsync("CONFIG", "SET", "requirepass", "a-wrong-one-5678"));
            case "unresolvable-host":
                return ("no-such-host.invalid:6379", null, null);
            case "garbage-listener":
                return ($"127.0.0.1:{Listen(async stream => await stream.WriteAsync("*garbage\r\n$-7\r\n:x\r\n"u8.ToArray()))}", null, null);
            case "silent-listener":
                return ($"127.0.0.1:{Listen(async stream => await Task.Delay(Timeout.Infinite, _listeners.Token))}", null, null);
            case "tls-expected-not-offered":
                var plain = await OwnAsync(await RedisServer.StartAsync());
                return ($"{plain.EndPoint},ssl=true", null, null);
            case "tls-offered-not-expected":
                return ($"127.0.0.1:{await StartTlsOnlyRedisAsync()}", null, null);
            case "client-pause":
                var paused = await OwnAsync(await RedisServer.StartAsync());
                return (paused.EndPoint, () => paused.CommandAsync("CLIENT", "PAUSE", "4000", "ALL"), () => Task.CompletedTask);
            case "debug-sleep":
                var sleeping = await OwnAsync(await RedisServer.StartAsync());
                return (sleeping.EndPoint, () => sleeping.CommandAsync("DEBUG", "SLEEP", "4"), () => Task.CompletedTask);
            default:
                throw new ArgumentOutOfRangeException(nameof(fault), fault, null);
        }
    }

    private async Task<RedisServer> OwnAsync(RedisServer server)
    {
        _owned.Add(server);
        return await Task.FromResult(server);
    }

    /// <summary>A listener that does <paramref name="serve"/> with each connection: garbage, or nothing at all.</summary>
    private int Listen(Func<NetworkStream, Task> serve)
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        _ = Task.Run(async () =>
        {
            try
            {
                while (!_listeners.IsCancellationRequested)
                {
                    var client = await listener.AcceptTcpClientAsync(_listeners.Token);
                    _ = Task.Run(async () =>
                    {
                        using (client)
                        {
                            try
                            {
                                await serve(client.GetStream());
                                await Task.Delay(Timeout.Infinite, _listeners.Token);
                            }
                            catch (Exception ex) when (ex is OperationCanceledException or IOException)
                            {
                            }
                        }
                    });
                }
            }
            catch (OperationCanceledException)
            {
            }
            finally
            {
                listener.Stop();
            }
        });
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>A redis-server that speaks TLS only (a self-signed certificate made here).</summary>
    private async Task<int> StartTlsOnlyRedisAsync()
    {
        var directory = Directory.CreateTempSubdirectory("muxwatch-tls-").FullName;
        var (key, certificate) = (Path.Combine(directory, "key.pem"), Path.Combine(directory, "cert.pem"));
        using (var openssl = System.Diagnostics.Process.Start("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1"]))
        {
            await openssl!.WaitForExitAsync();
        }

        var port = FreePort.Next();
        var redis = ExternalProcess.Start("redis-server", "--port", "0", "--tls-port", port.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--tls-cert-file", certificate, "--tls-key-file", key, "--tls-auth-clients", "no", "--bind", "127.0.0.1", "--save", "", "--dir", directory);
        _owned.Add(redis);
        await Eventually.UntilAsync(() =>
        {
            using var probe = new TcpClient();
            probe.Connect(IPAddress.Loopback, port);
            return true;
        }, "the TLS-only redis-server to listen");
        return port;
    }
}
