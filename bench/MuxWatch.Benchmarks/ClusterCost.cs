using System.Diagnostics;
using System.Globalization;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// What watching a Redis Cluster costs: one app multiplexer given one seed of a real cluster of 6 and of
/// 60 nodes (half primaries, half replicas; Debian's redis-server on loopback), MuxWatch probing every
/// node and polling each (INFO, CLUSTER INFO, LATENCY LATEST, SLOWLOG GET; CLUSTER NODES when the node
/// count changes and once a minute), against the same multiplexer alone, rounds interleaved. Prints the
/// CPU and allocation per probe cycle above that floor (in all and per node), the cycle's wall time and
/// the cost to render <c>/metrics</c>; asserts nothing.
/// </summary>
internal static class ClusterCost
{
    public static async Task<int> RunAsync(string[] args)
    {
        var sizes = ProbeScaling.StringOption(args, "--sizes", "6,60").Split(',').Select(c => int.Parse(c, CultureInfo.InvariantCulture)).ToArray();
        var seconds = HookOverhead.IntOption(args, "--seconds", 5);
        var rounds = HookOverhead.IntOption(args, "--rounds", 3);
        var renders = HookOverhead.IntOption(args, "--renders", 20);
        var interval = TimeSpan.FromMilliseconds(HookOverhead.IntOption(args, "--interval-ms", 100));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"cluster-cost: clusters of {string.Join('/', sizes)} nodes, one multiplexer given one seed, probe, PING and server poll every {interval.TotalMilliseconds:0} ms, {rounds} rounds (+1 warm-up) of {seconds} s, interleaved with the multiplexer alone, {Environment.ProcessorCount} cores"));
        Console.WriteLine($"  {"nodes",5} {"variant",-24} {"cycles",6} {"CPU µs/cycle",13} {"µs/node",8} {"KB alloc/cycle",15} {"KB/node",8} {"cycle ms (mean)",16}");

        foreach (var size in sizes)
        {
            var formed = Stopwatch.StartNew();
            await using var cluster = await RedisCluster.StartAsync(size);
            var options = ConfigurationOptions.Parse(cluster.Seed);
            options.ClientName = "bench-cluster";
            await using var multiplexer = await ConnectionMultiplexer.ConnectAsync(options);
            var waited = Stopwatch.StartNew();
            while (multiplexer.GetServers().Count(s => s.IsConnected) < size && waited.Elapsed < TimeSpan.FromSeconds(60))
            {
                await Task.Delay(50);
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  ({size} nodes formed and connected in {formed.Elapsed.TotalSeconds:F1} s)"));
            ConnectionMultiplexer[] watched = [multiplexer];
            var floors = new List<ProbeScaling.Measured>();
            var probeOnly = new List<ProbeScaling.Measured>();
            var runs = new List<ProbeScaling.Measured>();
            for (var round = 0; round <= rounds; round++)
            {
                var floor = await ProbeScaling.MeasureAsync(watched, null, seconds);
                var probed = await MeasureWatchedAsync(watched, interval, seconds, polling: false, size, renders: 0);
                var polled = await MeasureWatchedAsync(watched, interval, seconds, polling: true, size, round == rounds ? renders : 0);
                if (round > 0)
                {
                    floors.Add(floor);
                    probeOnly.Add(probed);
                    runs.Add(polled);
                }
            }

            Print(size, "probe only", probeOnly, floors);
            Print(size, "probe + server polling", runs, floors);
        }

        return 0;
    }

    private static async Task<ProbeScaling.Measured> MeasureWatchedAsync(ConnectionMultiplexer[] watched, TimeSpan interval, int seconds, bool polling, int size, int renders)
    {
        var registry = Metrics.NewCustomRegistry();
        using var host = await ProbeScaling.StartMuxWatchAsync(watched, registry, interval, polling, polledEndpoints: size);
        var measured = await ProbeScaling.MeasureAsync(watched, host, seconds);
        if (renders > 0)
        {
            await ProbeScaling.RenderAsync(size, registry, renders);
        }

        await host.StopAsync();
        return measured;
    }

    /// <summary>Medians over the rounds of what MuxWatch adds to the multiplexer alone, measured next to it.</summary>
    private static void Print(int size, string variant, List<ProbeScaling.Measured> runs, List<ProbeScaling.Measured> floors)
    {
        var cyclesPerSecond = ProbeScaling.Median(runs.Select(m => m.Cycles / m.Wall.TotalSeconds));
        var cpuPerCycle = ProbeScaling.Median(runs.Select((m, i) => (m.Cpu.TotalMicroseconds / m.Wall.TotalSeconds) - (floors[i].Cpu.TotalMicroseconds / floors[i].Wall.TotalSeconds))) / cyclesPerSecond;
        var bytesPerCycle = ProbeScaling.Median(runs.Select((m, i) => (m.Allocated / m.Wall.TotalSeconds) - (floors[i].Allocated / floors[i].Wall.TotalSeconds))) / cyclesPerSecond;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {size,5} {variant,-24} {runs.Sum(m => m.Cycles),6} {cpuPerCycle,13:F0} {cpuPerCycle / size,8:F1} {bytesPerCycle / 1024,15:F1} {bytesPerCycle / 1024 / size,8:F2} {ProbeScaling.Median(runs.Select(m => m.MeanCycleMs)),16:F2}"));
    }
}
