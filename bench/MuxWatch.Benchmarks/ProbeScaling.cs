using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Sources;
using MuxWatch.State;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// How the probe and the scrape scale: one process watching 1, 10, 100 and 500 endpoints (several
/// redis-server processes, several multiplexers each, one endpoint per multiplexer). For each count,
/// interleaved: the same multiplexers without MuxWatch (their own heartbeats: the floor), with
/// MuxWatch probing only, with MuxWatch probing and polling the servers, and with half of the
/// endpoints dead. Prints CPU time and bytes allocated per endpoint per cycle (above the floor), the
/// cycle's wall time, endpoint probes per core-second, and the cost to render <c>/metrics</c>;
/// asserts nothing.
/// </summary>
internal static class ProbeScaling
{
    public static async Task<int> RunAsync(string[] args)
    {
        var counts = StringOption(args, "--counts", "1,10,100,500").Split(',').Select(c => int.Parse(c, CultureInfo.InvariantCulture)).ToArray();
        var seconds = HookOverhead.IntOption(args, "--seconds", 10);
        var perServer = HookOverhead.IntOption(args, "--per-server", 10);
        var renders = HookOverhead.IntOption(args, "--renders", 20);
        var rounds = HookOverhead.IntOption(args, "--rounds", 3);
        var interval = TimeSpan.FromMilliseconds(HookOverhead.IntOption(args, "--interval-ms", 100));

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"probe-scaling: {string.Join('/', counts)} endpoints, {perServer} multiplexers per redis-server, probe and server poll every {interval.TotalMilliseconds:0} ms, {rounds} rounds (+1 warm-up) of {seconds} s per variant, interleaved, {Environment.ProcessorCount} cores"));
        Console.WriteLine($"  {"endpoints",9} {"variant",-24} {"cycles",6} {"CPU µs/endpoint/cycle",22} {"KB alloc/endpoint/cycle",24} {"cycle ms (mean)",16} {"probes/core-s",14}");

        var servers = new List<RedisServer>();
        try
        {
            foreach (var count in counts)
            {
                while (servers.Count * perServer < count)
                {
                    servers.Add(await RedisServer.StartAsync());
                }

                var deadPort = FreePort.Next(); // nothing listens there: a dead endpoint
                var live = await ConnectAsync(count, i => servers[i / perServer].EndPoint);
                var halfDead = await ConnectAsync(count, i => i % 2 == 0 ? servers[i / perServer].EndPoint : $"127.0.0.1:{deadPort}");
                try
                {
                    // Each variant is measured against the floor of the same multiplexers (a dead endpoint's
                    // reconnects cost the client too), rounds interleaved so that drift hits all alike; the
                    // first round warms up (JIT, connections) and is not counted.
                    (string Name, ConnectionMultiplexer[] Multiplexers, bool? Polling)[] variants =
                    [
                        ("floor (no MuxWatch)", live, null),
                        ("probe only", live, false),
                        ("probe + server polling", live, true),
                        ("half dead: floor", halfDead, null),
                        ("half dead, + polling", halfDead, true),
                    ];
                    var results = variants.ToDictionary(v => v.Name, _ => new List<Measured>());
                    for (var round = 0; round <= rounds; round++)
                    {
                        foreach (var (name, multiplexers, polling) in variants)
                        {
                            var registry = Metrics.NewCustomRegistry();
                            using var host = polling is { } withPolling ? await StartMuxWatchAsync(multiplexers, registry, interval, withPolling) : null;
                            var measured = await MeasureAsync(multiplexers, host, seconds);
                            if (round > 0)
                            {
                                results[name].Add(measured);
                            }

                            if (round == rounds && name == "probe + server polling")
                            {
                                await RenderAsync(count, registry, renders);
                            }

                            if (host is not null)
                            {
                                await host.StopAsync();
                            }
                        }
                    }

                    foreach (var (name, _, polling) in variants)
                    {
                        Print(count, name, results[name], polling is null ? null : results[name.StartsWith("half", StringComparison.Ordinal) ? "half dead: floor" : "floor (no MuxWatch)"]);
                    }
                }
                finally
                {
                    foreach (var multiplexer in live.Concat(halfDead))
                    {
                        await multiplexer.DisposeAsync();
                    }
                }
            }
        }
        finally
        {
            foreach (var server in servers)
            {
                await server.DisposeAsync();
            }
        }

        return 0;
    }

    private static async Task<ConnectionMultiplexer[]> ConnectAsync(int count, Func<int, string> endpointOf)
    {
        var connecting = Enumerable.Range(0, count).Select(i =>
        {
            var options = ConfigurationOptions.Parse(endpointOf(i));
            options.AbortOnConnectFail = false; // a dead endpoint is watched, not refused
            options.ConnectTimeout = 2000;
            options.ClientName = $"bench-{i}";
            return ConnectionMultiplexer.ConnectAsync(options);
        });
        return await Task.WhenAll(connecting);
    }

    /// <summary>
    /// Starts MuxWatch watching <paramref name="multiplexers"/>; returns once two cycles ran and, with polling,
    /// <paramref name="polledEndpoints"/> endpoints (by default every live one configured) were polled.
    /// </summary>
    internal static async Task<IHost> StartMuxWatchAsync(ConnectionMultiplexer[] multiplexers, CollectorRegistry registry, TimeSpan interval, bool polling, int? polledEndpoints = null)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = interval.ToString("c", CultureInfo.InvariantCulture);
        builder.Configuration["MuxWatch:ServerPollInterval"] = interval.ToString("c", CultureInfo.InvariantCulture);
        builder.Configuration["MuxWatch:PingInterval"] = interval.ToString("c", CultureInfo.InvariantCulture); // a PING every cycle, as the figures were taken
        builder.Configuration["MuxWatch:ServerPolling"] = polling ? "true" : "false";
        var muxWatch = builder.Services.AddMuxWatch().UseMetricsRegistry(registry);
        for (var i = 0; i < multiplexers.Length; i++)
        {
            var multiplexer = multiplexers[i];
            muxWatch.AddMultiplexer($"app-{i}", _ => multiplexer);
        }

        var host = builder.Build();
        await host.StartAsync();

        // The steady state: every live endpoint polled once (its admin connection made), two cycles done.
        var health = host.Services.GetRequiredService<ProbeLoopHealth>();
        var timelines = host.Services.GetRequiredService<ServerTimelines>();
        var toPoll = polledEndpoints ?? Math.Min(multiplexers.Count(m => m.IsConnected), DistinctLiveEndpoints(multiplexers));
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < TimeSpan.FromSeconds(60)
            && (health.Cycles < 2 || (polling && timelines.All.Count(t => t.CompleteThrough is not null) < toPoll)))
        {
            await Task.Delay(50);
        }

        return host;
    }

    private static int DistinctLiveEndpoints(ConnectionMultiplexer[] multiplexers) =>
        multiplexers.Where(m => m.IsConnected).SelectMany(m => m.GetEndPoints()).Select(e => e.ToString()).Distinct().Count();

    internal static async Task<Measured> MeasureAsync(ConnectionMultiplexer[] multiplexers, IHost? host, int seconds)
    {
        var health = host?.Services.GetRequiredService<ProbeLoopHealth>();
        var cyclesBefore = health?.Cycles ?? 0;
        var cycleTime = host is null ? null : CycleHistogram(host);
        var (sumBefore, countBefore) = cycleTime?.Invoke() ?? (0, 0);
        GC.Collect();
        var process = Process.GetCurrentProcess();
        var cpuBefore = process.TotalProcessorTime;
        var allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        var wall = Stopwatch.StartNew();
        await Task.Delay(TimeSpan.FromSeconds(seconds));
        process.Refresh();
        var cpu = process.TotalProcessorTime - cpuBefore;
        var allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
        var (sumAfter, countAfter) = cycleTime?.Invoke() ?? (0, 0);
        var cycles = host is null ? 0 : health!.Cycles - cyclesBefore;
        var meanCycleMs = countAfter > countBefore ? (sumAfter - sumBefore) / (countAfter - countBefore) * 1000 : 0;
        return new Measured(multiplexers.Length, wall.Elapsed, cycles, cpu, allocated, meanCycleMs);
    }

    /// <summary>Reads the loop's own cycle histogram (<c>muxwatch_probe_cycle_seconds</c>) from MuxWatch's registry.</summary>
    private static Func<(double Sum, double Count)> CycleHistogram(IHost host)
    {
        var metrics = host.Services.GetRequiredService<MuxWatch.Export.MuxWatchMetrics>();
        return () => (metrics.ProbeCycle.Sum, metrics.ProbeCycle.Count);
    }

    /// <summary>
    /// One line per variant: medians over the rounds of what MuxWatch adds to the same multiplexers
    /// idling over the same time (round by round: each measurement minus the floor measured next to it).
    /// </summary>
    private static void Print(int count, string variant, List<Measured> runs, List<Measured>? floors)
    {
        static double CpuPerSecond(Measured m) => m.Cpu.TotalMicroseconds / m.Wall.TotalSeconds;
        static double BytesPerSecond(Measured m) => m.Allocated / m.Wall.TotalSeconds;
        if (floors is null)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  {count,9} {variant,-24} {"",6} {Median(runs.Select(CpuPerSecond)) / count,22:F1} {Median(runs.Select(BytesPerSecond)) / count / 1024,24:F2}   (per endpoint per second: the client's own cost)"));
            return;
        }

        var cycles = Median(runs.Select(m => m.Cycles / m.Wall.TotalSeconds)); // cycles per second
        var cpuPerProbe = Median(runs.Select((m, i) => CpuPerSecond(m) - CpuPerSecond(floors[i]))) / cycles / count;
        var bytesPerProbe = Median(runs.Select((m, i) => BytesPerSecond(m) - BytesPerSecond(floors[i]))) / cycles / count;
        var cycleMs = Median(runs.Select(m => m.MeanCycleMs));
        var probesPerCoreSecond = cpuPerProbe <= 0 ? double.NaN : 1_000_000 / cpuPerProbe;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {count,9} {variant,-24} {runs.Sum(m => m.Cycles),6} {cpuPerProbe,22:F1} {bytesPerProbe / 1024,24:F2} {cycleMs,16:F2} {probesPerCoreSecond,14:F0}"));
    }

    internal static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
    }

    /// <summary>The cost to render <c>/metrics</c>: prometheus-net's text export of MuxWatch's registry, as the endpoint serves it.</summary>
    internal static async Task RenderAsync(int count, CollectorRegistry registry, int renders)
    {
        var times = new List<double>();
        var allocations = new List<long>();
        long bytes = 0;
        var series = 0;
        for (var i = 0; i < renders; i++)
        {
            using var stream = new MemoryStream();
            var allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
            var started = Stopwatch.GetTimestamp();
            await registry.CollectAndExportAsTextAsync(stream);
            times.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
            allocations.Add(GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore - stream.Capacity);
            bytes = stream.Length;
            series = System.Text.Encoding.UTF8.GetString(stream.ToArray()).Split('\n').Count(l => l.Length > 0 && l[0] != '#');
        }

        times.Sort();
        allocations.Sort();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {count,9} render /metrics: {times[times.Count / 2],7:F2} ms median ({times[0]:F2}-{times[^1]:F2}), {bytes / 1024.0,8:F1} KB, {series} series ({(double)series / count:F1} per endpoint), {allocations[allocations.Count / 2] / 1024.0:F0} KB allocated besides the text"));
    }

    internal static string StringOption(string[] args, string name, string fallback)
    {
        var at = Array.IndexOf(args, name);
        return at >= 0 && at + 1 < args.Length ? args[at + 1] : fallback;
    }

    internal sealed record Measured(int Endpoints, TimeSpan Wall, long Cycles, TimeSpan Cpu, long Allocated, double MeanCycleMs);
}
