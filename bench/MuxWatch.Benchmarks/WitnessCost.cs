using System.Globalization;
using System.Net;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Sources;
using MuxWatch.State;
using MuxWatch.Testing;

namespace MuxWatch.Benchmarks;

/// <summary>
/// What the witness thread costs on its own, in this process: its CPU time a second with no endpoint and with
/// one endpoint, quiet (no other work in the process) and busy (the process marked busy by pool work), against
/// the same process with no witness. Each phase runs for <c>--seconds</c> after <c>--warmup</c> seconds. Short
/// phases carry the JIT of the thread's loop (a few milliseconds over the phase): <c>idle-cost</c> gives the
/// steady figure in an app.
/// </summary>
internal static class WitnessCost
{
    public static async Task<int> RunAsync(string[] args)
    {
        var seconds = HookOverhead.IntOption(args, "--seconds", 30);
        var warmup = HookOverhead.IntOption(args, "--warmup", 5);
        await using var redis = await RedisServer.StartAsync();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"witness-cost: CPU ms/s of this process, {seconds} s a phase"));
        Calls("GC.GetTotalPauseDuration", () => GC.GetTotalPauseDuration());
        Calls("Environment.CpuUsage", () => Environment.CpuUsage.TotalTime);
        Calls("ThreadPool.CompletedWorkItemCount", () => ThreadPool.CompletedWorkItemCount);
        Calls("TimeProvider.GetUtcNow", () => TimeProvider.System.GetUtcNow());
        Console.WriteLine("  phase                                   ms/s  wakes/s  answers/s");
        Report("no witness", await MeasureAsync(warmup, seconds, start: false, endpoint: null, busy: false));
        Report("witness thread, no endpoint", await MeasureAsync(warmup, seconds, start: true, endpoint: null, busy: false));
        Report("witness, one endpoint, quiet", await MeasureAsync(warmup, seconds, start: true, redis.EndPoint, busy: false));
        Report("no witness, busy (50 work items/s)", await MeasureAsync(warmup, seconds, start: false, endpoint: null, busy: true));
        Report("witness, one endpoint, busy", await MeasureAsync(warmup, seconds, start: true, redis.EndPoint, busy: true));
        return 0;
    }

    private static void Calls<T>(string name, Func<T> call)
    {
        for (var i = 0; i < 1000; i++)
        {
            call();
        }

        var before = Environment.CpuUsage.TotalTime;
        for (var i = 0; i < 10_000; i++)
        {
            call();
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {name,-40}{(Environment.CpuUsage.TotalTime - before).TotalMicroseconds / 10_000,8:0.00} µs CPU a call"));
    }

    private static void Report(string phase, (double MsPerSecond, double Wakes, double Answers) figures) =>
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {phase,-40}{figures.MsPerSecond,6:0.00}{figures.Wakes,9:0.0}{figures.Answers,11:0.0}"));

    private static async Task<(double MsPerSecond, double Wakes, double Answers)> MeasureAsync(int warmup, int seconds, bool start, string? endpoint, bool busy)
    {
        var options = Options.Create(new MuxWatchOptions());
        var timelines = new ServerTimelines(options);
        if (endpoint is not null)
        {
            timelines.GetOrAdd(endpoint).WitnessAt(IPEndPoint.Parse(endpoint), null);
        }

        using var witness = new WitnessThread(timelines, new RuntimeHistory(), TimeProvider.System, options);
        if (start)
        {
            await witness.StartAsync(CancellationToken.None);
        }

        using var stop = new CancellationTokenSource();
        var load = busy ? Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                await Task.Delay(20); // about 50 pool work items a second: what marks a process busy, not a load
            }
        }) : Task.CompletedTask;
        await Task.Delay(TimeSpan.FromSeconds(warmup)); // warm-up: connects, JIT of the loop
        var before = Environment.CpuUsage.TotalTime;
        var cycles = witness.Cycles;
        var started = DateTime.UtcNow;
        await Task.Delay(TimeSpan.FromSeconds(seconds)); // the measured span itself
        var elapsed = (DateTime.UtcNow - started).TotalSeconds;
        var used = (Environment.CpuUsage.TotalTime - before).TotalMilliseconds / elapsed;
        var answers = timelines.All.Count > 0 ? timelines.All[0].AnsweredWithin(new DateTimeOffset(started), DateTimeOffset.UtcNow).Count : 0;
        var wakes = (witness.Cycles - cycles) / elapsed;
        await stop.CancelAsync();
        await load;
        return (used, wakes, answers / elapsed);
    }
}
