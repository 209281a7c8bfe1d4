using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The headline: what MuxWatch costs an app under load. Many concurrent async callers doing GET, SET and
/// INCR through one multiplexer to a real redis-server, a fixed number of operations per run, with
/// MuxWatch in-process (probe every 1 s or every 100 ms; capture and server polling on) against the same
/// load without it, and against AspNetCore.HealthChecks.Redis checking the same multiplexer every second.
/// Variants interleaved, round after round (the order reversed every other round); prints medians,
/// spread and ratios; asserts nothing.
/// </summary>
internal static class AppCost
{
    private const int Keys = 1000;

    /// <summary>The client version this build runs on (3.4.35, or the 2.6.90 floor build).</summary>
    public static string? ClientVersion => typeof(IConnectionMultiplexer).Assembly.GetCustomAttributes(typeof(System.Reflection.AssemblyInformationalVersionAttribute), false)
        .OfType<System.Reflection.AssemblyInformationalVersionAttribute>().FirstOrDefault()?.InformationalVersion;

    public static async Task<int> RunAsync(string[] args)
    {
        var rounds = HookOverhead.IntOption(args, "--rounds", 9);
        var operations = HookOverhead.IntOption(args, "--ops", 200_000);
        var callers = HookOverhead.IntOption(args, "--callers", 64);

        await using var redis = await RedisServer.StartAsync();
        await using var multiplexer = await ConnectionMultiplexer.ConnectAsync(redis.EndPoint);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"app-cost: StackExchange.Redis {ClientVersion}, {callers} callers, {operations} operations per run, {rounds} rounds, variants interleaved"));

        (string Name, Func<IConnectionMultiplexer, Task<IHost?>> Start)[] variants =
        [
            ("without MuxWatch", _ => Task.FromResult<IHost?>(null)),
            ("MuxWatch, probe 1 s", m => StartMuxWatchAsync(m, TimeSpan.FromSeconds(1))),
            ("MuxWatch, probe 100 ms", m => StartMuxWatchAsync(m, TimeSpan.FromMilliseconds(100))),
            ("HealthChecks.Redis, 1 s", StartHealthChecksAsync),
        ];

        await LoadAsync(multiplexer, operations / 4, callers); // warm-up: connection, JIT, pool
        var results = variants.ToDictionary(v => v.Name, _ => new List<(double Throughput, double P99)>());
        for (var round = 0; round < rounds; round++)
        {
            foreach (var (name, start) in round % 2 == 0 ? variants : variants.Reverse())
            {
                var host = await start(multiplexer);
                var result = await LoadAsync(multiplexer, operations, callers);
                if (host is not null)
                {
                    await host.StopAsync();
                    host.Dispose();
                }

                results[name].Add(result);
            }
        }

        var baseline = results[variants[0].Name];
        Console.WriteLine($"  {"variant",-26} {"ops/s (median, min-max)",-30} {"ratio",7} {"p99 µs (median, min-max)",-28} {"p99 ratio",9}");
        foreach (var (name, _) in variants)
        {
            var runs = results[name];
            var throughputRatio = Median(runs.Select((r, i) => r.Throughput / baseline[i].Throughput));
            var p99Ratio = Median(runs.Select((r, i) => r.P99 / baseline[i].P99));
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  {name,-26} {Median(runs.Select(r => r.Throughput)),9:F0} ({runs.Min(r => r.Throughput):F0}-{runs.Max(r => r.Throughput):F0}){"",-3} {throughputRatio,7:F4} {Median(runs.Select(r => r.P99)),8:F0} ({runs.Min(r => r.P99):F0}-{runs.Max(r => r.P99):F0}){"",-6} {p99Ratio,9:F3}"));
        }

        return 0;
    }

    private static async Task<IHost?> StartMuxWatchAsync(IConnectionMultiplexer multiplexer, TimeSpan interval)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = interval.ToString("c", CultureInfo.InvariantCulture);
        builder.Configuration["MuxWatch:ServerPollInterval"] = interval.ToString("c", CultureInfo.InvariantCulture);
        builder.Configuration["MuxWatch:PingInterval"] = interval.ToString("c", CultureInfo.InvariantCulture); // a PING every cycle, as the figures were taken
        builder.Services.AddMuxWatch().UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry()).AddMultiplexer("app", _ => multiplexer);
        var host = builder.Build();
        await host.StartAsync();

        // Measure the steady state: the multiplexer resolved and its server polled once (its own connection made).
        var timelines = host.Services.GetRequiredService<MuxWatch.State.ServerTimelines>();
        while (timelines.All.All(t => t.CompleteThrough is null))
        {
            await Task.Delay(10);
        }

        return host;
    }

    /// <summary>The closest peer: AspNetCore.HealthChecks.Redis run every second by the health-check publisher.</summary>
    private static async Task<IHost?> StartHealthChecksAsync(IConnectionMultiplexer multiplexer)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddHealthChecks().AddRedis(multiplexer);
        builder.Services.Configure<HealthCheckPublisherOptions>(options =>
        {
            options.Delay = TimeSpan.Zero;
            options.Period = TimeSpan.FromSeconds(1);
        });
        var publisher = new DiscardingPublisher();
        builder.Services.AddSingleton<IHealthCheckPublisher>(publisher);
        var host = builder.Build();
        await host.StartAsync();
        await publisher.FirstReport.Task; // the steady state: the first check has run
        return host;
    }

    /// <summary>Runs <paramref name="operations"/> GET/SET/INCR from <paramref name="callers"/> concurrent callers: throughput and p99 latency.</summary>
    private static async Task<(double Throughput, double P99)> LoadAsync(ConnectionMultiplexer multiplexer, int operations, int callers)
    {
        var database = multiplexer.GetDatabase();
        var latencies = new long[operations];
        var next = -1;
        var started = Stopwatch.GetTimestamp();
        await Task.WhenAll(Enumerable.Range(0, callers).Select(_ => Task.Run(async () =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < operations)
            {
                var key = $"bench:{i % Keys}";
                var before = Stopwatch.GetTimestamp();
                switch (i % 3)
                {
                    case 0: await database.StringGetAsync(key); break;
                    case 1: await database.StringSetAsync(key, "value"); break;
                    default: await database.StringIncrementAsync($"bench:n:{i % Keys}"); break;
                }

                latencies[i] = Stopwatch.GetTimestamp() - before;
            }
        })));
        var elapsed = Stopwatch.GetElapsedTime(started);
        Array.Sort(latencies);
        var p99 = latencies[(int)(latencies.Length * 0.99)] * 1_000_000.0 / Stopwatch.Frequency;
        return (operations / elapsed.TotalSeconds, p99);
    }

    private static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
    }

    /// <summary>Drops the health reports, noting the first (shared with idle-cost).</summary>
    internal sealed class DiscardingPublisher : IHealthCheckPublisher
    {
        public TaskCompletionSource FirstReport { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task PublishAsync(HealthReport report, CancellationToken cancellationToken)
        {
            FirstReport.TrySetResult();
            return Task.CompletedTask;
        }
    }
}
