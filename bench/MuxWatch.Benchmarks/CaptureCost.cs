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
        var depth = HookOverhead.IntOption(args, "--depth", 0); // each worker blocked this many frames deep in the app's code
        await using var redis = await RedisServer.StartAsync();
        await using var app = await ConnectionMultiplexer.ConnectAsync($"{redis.EndPoint},abortConnect=false");
        var db = app.GetDatabase();
        await db.StringSetAsync("capture-cost", "value");

        // Pool workers in the app's code, as in a starvation: blocked in a wait, so that every capture has sites to sum;
        // the pool's minimum above them, so that the app's requests still have threads (what they lose is the capture's).
        ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
        ThreadPool.SetMinThreads(Math.Max(minWorkers, workers + 32), minIo);
        var release = new ManualResetEventSlim(); // never disposed: a worker may start after the release
        using var started = new CountdownEvent(workers);
        for (var i = 0; i < workers; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(_ => MuxWatch.Testing.DeepRecursion.Block(depth, started, release), null);
        }

        started.Wait(TimeSpan.FromMinutes(2));
        using var pauses = new PauseWatch();

        var captures = new PoolStackCaptures(TimeSpan.FromSeconds(1));
        var capturer = new PoolStackCapturer(captures, new MuxWatchMetrics(Prometheus.Metrics.NewCustomRegistry()), TimeProvider.System, NullLogger<PoolStackCapturer>.Instance);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"capture-cost: {workers} pool workers blocked {depth} frames deep, {callers} callers of GET, {rounds} rounds"));
        Console.WriteLine("  window                          took ms   CPU ms   alloc MB  +WS MB   GETs/s   p99 ms   max ms  pause max  >50 ms  GC ms  GCs");

        var load = new Load(db, callers);
        var loading = load.RunAsync();
        Report("first capture (cold)", await WindowAsync(load, pauses, () => Capture(capturer, captures)));
        var first = captures.All[^1];
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  it read: {first.Workers} workers, {first.BlockedWorkers} blocked, {first.BusyWorkers} busy: {PoolStackCapturer.Describe(first)}"));
        var with = new List<Figures>();
        var without = new List<Figures>();
        for (var round = 0; round < rounds; round++)
        {
            await Task.Delay(TimeSpan.FromSeconds(1.1)); // past the capture interval
            var took = 0.0;
            with.Add(await WindowAsync(load, pauses, () => took = Capture(capturer, captures)));
            without.Add(await WindowAsync(load, pauses, () => Thread.Sleep(TimeSpan.FromMilliseconds(took))));
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
    private static async Task<Figures> WindowAsync(Load load, PauseWatch pauses, Action during)
    {
        load.Reset();
        pauses.Reset();
        var cpu = Environment.CpuUsage.TotalTime;
        var allocated = GC.GetTotalAllocatedBytes();
        var workingSet = Environment.WorkingSet;
        var gcPause = GC.GetTotalPauseDuration();
        var gcs = GC.CollectionCount(0);
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
            latencies.Count == 0 ? 0 : latencies[^1],
            pauses.MaxMs,
            pauses.Over50Ms,
            (GC.GetTotalPauseDuration() - gcPause).TotalMilliseconds,
            GC.CollectionCount(0) - gcs);
    }

    private static Figures Median(List<Figures> all)
    {
        static double Mid(IEnumerable<double> values) => values.Order().ElementAt(values.Count() / 2);
        return new Figures(Mid(all.Select(f => f.TookMs)), Mid(all.Select(f => f.CpuMs)), Mid(all.Select(f => f.AllocatedMb)), Mid(all.Select(f => f.WorkingSetMb)),
            Mid(all.Select(f => f.GetsPerSecond)), Mid(all.Select(f => f.P99Ms)), Mid(all.Select(f => f.MaxMs)), Mid(all.Select(f => f.PauseMaxMs)), (int)Mid(all.Select(f => (double)f.PausesOver50Ms)),
            Mid(all.Select(f => f.GcPauseMs)), (int)Mid(all.Select(f => (double)f.Collections)));
    }

    private static void Report(string window, Figures f) =>
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {window,-30}{f.TookMs,8:0}{f.CpuMs,9:0}{f.AllocatedMb,11:0.0}{f.WorkingSetMb,8:0.0}{f.GetsPerSecond,9:0}{f.P99Ms,9:0.0}{f.MaxMs,9:0.0}{f.PauseMaxMs,11:0}{f.PausesOver50Ms,8}{f.GcPauseMs,10:0}{f.Collections,5}"));

    private sealed record Figures(double TookMs, double CpuMs, double AllocatedMb, double WorkingSetMb, double GetsPerSecond, double P99Ms, double MaxMs, double PauseMaxMs, int PausesOver50Ms, double GcPauseMs, int Collections);

    /// <summary>
    /// How long the app's threads were held: a thread of the app's that sleeps 1 ms at a time and notes each wake later
    /// than 5 ms (the runtime suspended for a stack sample, a GC); the longest and how many over 50 ms, per window.
    /// </summary>
    private sealed class PauseWatch : IDisposable
    {
        private readonly Thread _thread;
        private volatile bool _stopped;
        private double _maxMs;
        private int _over50;

        public PauseWatch()
        {
            _thread = new Thread(Run) { IsBackground = true, Name = "pause watch" };
            _thread.Start();
        }

        public double MaxMs => Volatile.Read(ref _maxMs);

        public int Over50Ms => Volatile.Read(ref _over50);

        public void Reset()
        {
            Volatile.Write(ref _maxMs, 0);
            Volatile.Write(ref _over50, 0);
        }

        public void Dispose()
        {
            _stopped = true;
            _thread.Join();
        }

        private void Run()
        {
            while (!_stopped)
            {
                var started = Stopwatch.GetTimestamp();
                Thread.Sleep(1);
                var late = Stopwatch.GetElapsedTime(started).TotalMilliseconds - 1;
                if (late > 5)
                {
                    Volatile.Write(ref _maxMs, Math.Max(Volatile.Read(ref _maxMs), late));
                    if (late > 50)
                    {
                        Interlocked.Increment(ref _over50);
                    }
                }
            }
        }
    }

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
