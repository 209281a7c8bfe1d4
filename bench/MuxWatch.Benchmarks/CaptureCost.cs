using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.Logging.Abstractions;
using MuxWatch.Export;
using MuxWatch.Sources;
using MuxWatch.State;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// What one capture of the pool's stacks costs the app it runs in: the time from the request to the summary, the
/// process's CPU, allocations and working set over it, and what the app's own Redis requests (8 async callers, in a loop) lose
/// meanwhile: their throughput and slowest latencies in a window with a capture against an equal window without,
/// interleaved round by round. The first capture pays the JIT of TraceEvent's code, so it is shown apart.
/// </summary>
internal static class CaptureCost
{
    public static async Task<int> RunAsync(string[] args)
    {
        var rounds = HookOverhead.IntOption(args, "--rounds", 5);
        var workers = HookOverhead.IntOption(args, "--workers", 40);
        var callers = args.Contains("--idle") ? 0 : HookOverhead.IntOption(args, "--callers", 8); // --idle: the capture alone
        await using var redis = await RedisServer.StartAsync();
        await using var app = await ConnectionMultiplexer.ConnectAsync($"{redis.EndPoint},abortConnect=false");
        var db = app.GetDatabase();
        await db.StringSetAsync("capture-cost", "value");

        // Pool workers in the app's code, as in a starvation: blocked in a wait, so that every capture has sites to sum;
        // the pool's minimum above them, so that the app's requests still have threads (what they lose is the capture's).
        ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
        ThreadPool.SetMinThreads(Math.Max(minWorkers, workers + 32), minIo);
        var release = new ManualResetEventSlim(); // never disposed: a worker may start after the release
        for (var i = 0; i < workers; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(_ => release.Wait(), null);
        }

        var captures = new PoolStackCaptures(TimeSpan.FromSeconds(1));
        var capturer = new PoolStackCapturer(captures, new MuxWatchMetrics(Prometheus.Metrics.NewCustomRegistry()), TimeProvider.System, NullLogger<PoolStackCapturer>.Instance);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"capture-cost: {workers} pool workers blocked, {callers} callers of GET, {rounds} rounds"));
        Console.WriteLine("  window                          took ms   CPU ms   alloc MB  +WS MB   GETs/s   p99 ms   max ms");

        var load = new Load(db, callers);
        var loading = load.RunAsync();
        Report("first capture (cold)", await WindowAsync(load, () => Capture(capturer, captures)));
        var with = new List<Figures>();
        var without = new List<Figures>();
        for (var round = 0; round < rounds; round++)
        {
            await Task.Delay(TimeSpan.FromSeconds(1.1)); // past the capture interval
            var took = 0.0;
            with.Add(await WindowAsync(load, () => took = Capture(capturer, captures)));
            without.Add(await WindowAsync(load, () => Thread.Sleep(TimeSpan.FromMilliseconds(took))));
        }

        Report("capture (warm, median)", Median(with));
        Report("no capture (same length)", Median(without));
        var (w, o) = (Median(with), Median(without));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  ratio with/without: GETs/s {w.GetsPerSecond / Math.Max(o.GetsPerSecond, 1):0.00}, p99 {w.P99Ms / Math.Max(o.P99Ms, 0.001):0.00}, CPU {w.CpuMs / Math.Max(o.CpuMs, 0.001):0.00}"));
        load.Stop();
        await loading;
        release.Set();
        return 0;
    }

    private static double Capture(PoolStackCapturer capturer, PoolStackCaptures captures)
    {
        var started = Stopwatch.GetTimestamp();
        capturer.Request("bench");
        capturer.WaitForCapture(TimeSpan.FromMinutes(1));
        _ = captures.All[^1];
        return Stopwatch.GetElapsedTime(started).TotalMilliseconds;
    }

    /// <summary>Runs <paramref name="during"/> on a thread of its own while the load goes on, and measures the window.</summary>
    private static async Task<Figures> WindowAsync(Load load, Action during)
    {
        load.Reset();
        var cpu = Environment.CpuUsage.TotalTime;
        var allocated = GC.GetTotalAllocatedBytes();
        var workingSet = Environment.WorkingSet;
        var started = Stopwatch.GetTimestamp();
        await Task.Factory.StartNew(during, TaskCreationOptions.LongRunning);
        var elapsed = Stopwatch.GetElapsedTime(started);
        var latencies = load.Take();
        latencies.Sort();
        return new Figures(
            elapsed.TotalMilliseconds,
            (Environment.CpuUsage.TotalTime - cpu).TotalMilliseconds,
            (GC.GetTotalAllocatedBytes() - allocated) / 1048576.0,
            (Environment.WorkingSet - workingSet) / 1048576.0,
            latencies.Count / elapsed.TotalSeconds,
            latencies.Count == 0 ? 0 : latencies[(int)(latencies.Count * 0.99)],
            latencies.Count == 0 ? 0 : latencies[^1]);
    }

    private static Figures Median(List<Figures> all)
    {
        static double Mid(IEnumerable<double> values) => values.Order().ElementAt(values.Count() / 2);
        return new Figures(Mid(all.Select(f => f.TookMs)), Mid(all.Select(f => f.CpuMs)), Mid(all.Select(f => f.AllocatedMb)), Mid(all.Select(f => f.WorkingSetMb)),
            Mid(all.Select(f => f.GetsPerSecond)), Mid(all.Select(f => f.P99Ms)), Mid(all.Select(f => f.MaxMs)));
    }

    private static void Report(string window, Figures f) =>
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {window,-30}{f.TookMs,8:0}{f.CpuMs,9:0}{f.AllocatedMb,11:0.0}{f.WorkingSetMb,8:0.0}{f.GetsPerSecond,9:0}{f.P99Ms,9:0.0}{f.MaxMs,9:0.0}"));

    private sealed record Figures(double TookMs, double CpuMs, double AllocatedMb, double WorkingSetMb, double GetsPerSecond, double P99Ms, double MaxMs);

    /// <summary>The app's requests: <paramref name="callers"/> callers, each a GET after the other, their latencies kept per window.</summary>
    private sealed class Load(IDatabase db, int callers)
    {
        private readonly Lock _gate = new();
        private List<double> _latencies = [];
        private volatile bool _stopped;

        public Task RunAsync() => Task.WhenAll(Enumerable.Range(0, callers).Select(_ => Task.Run(async () =>
        {
            while (!_stopped)
            {
                var started = Stopwatch.GetTimestamp();
                await db.StringGetAsync("capture-cost");
                var ms = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
                lock (_gate)
                {
                    _latencies.Add(ms);
                }
            }
        })));

        public void Reset()
        {
            lock (_gate)
            {
                _latencies = [];
            }
        }

        public List<double> Take()
        {
            lock (_gate)
            {
                var taken = _latencies;
                _latencies = [];
                return taken;
            }
        }

        public void Stop() => _stopped = true;
    }
}
