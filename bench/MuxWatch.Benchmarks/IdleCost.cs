using System.Diagnostics;
using System.Globalization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// What watching costs an idle app, in CPU: the same idle ASP.NET Core app with one connected multiplexer
/// run as separate processes side by side (without MuxWatch; with <c>AddMuxWatch().AddMultiplexer(...)</c>
/// at the defaults; with AspNetCore.HealthChecks.Redis checking every second), each reporting its own
/// process CPU time (<see cref="Environment.CpuUsage"/>, microsecond resolution) over the first minute
/// and over a window after a warm-up. Prints ms of CPU per second and the difference to the bare app;
/// asserts nothing.
/// </summary>
internal static class IdleCost
{
    private static readonly string[] Variants = ["bare", "muxwatch", "healthchecks"];

    public static async Task<int> RunAsync(string[] args)
    {
        var warmup = HookOverhead.IntOption(args, "--warmup", 90);
        var measure = HookOverhead.IntOption(args, "--measure", 30);
        // The first window: a minute by default; --first 600 is the first ten minutes a new user measures (issue 52).
        var first = Math.Min(HookOverhead.IntOption(args, "--first", 60), warmup);
        // Several copies of each variant at once, each its own process: one copy's figure moves with the machine.
        var copies = Math.Max(1, HookOverhead.IntOption(args, "--copies", 1));
        var variants = args.SkipWhile(arg => arg != "--variants").Skip(1).FirstOrDefault()?.Split(',') ?? Variants;
        await using var redis = await RedisServer.StartAsync();
        var self = typeof(IdleCost).Assembly.Location;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"idle-cost: StackExchange.Redis {AppCost.ClientVersion}, each variant its own idle ASP.NET Core process ({copies} of each), run side by side; first {first} s, then {measure} s after {warmup} s"));

        var runs = variants.SelectMany(variant => Enumerable.Range(1, copies).Select(copy => (Variant: variant, Copy: copy))).ToList();
        var children = runs.Select(run =>
        {
            // A variant may carry settings after '@' (--variants bare,muxwatch,muxwatch@MuxWatch:ServerPolling=false): an ablation side by side.
            var start = new ProcessStartInfo("dotnet")
            {
                ArgumentList = { self, "idle-app", run.Variant, redis.EndPoint, warmup.ToString(CultureInfo.InvariantCulture), measure.ToString(CultureInfo.InvariantCulture), first.ToString(CultureInfo.InvariantCulture) },
                RedirectStandardOutput = true,
                UseShellExecute = false,
            };
            foreach (var setting in run.Variant.Split('@').Skip(1))
            {
                start.ArgumentList.Add(setting);
            }

            return Process.Start(start)!;
        }).ToList();
        var lines = await Task.WhenAll(children.Select(async child =>
        {
            var output = await child.StandardOutput.ReadToEndAsync();
            await child.WaitForExitAsync();
            return output.Trim();
        }));

        var figures = lines.Select(line => line.Split(' ')).Select(parts =>
            (Variant: parts[0], First: double.Parse(parts[1], CultureInfo.InvariantCulture), Steady: double.Parse(parts[2], CultureInfo.InvariantCulture), Items: double.Parse(parts[3], CultureInfo.InvariantCulture),
             Jit: double.Parse(parts[4], CultureInfo.InvariantCulture), Methods: int.Parse(parts[5], CultureInfo.InvariantCulture), SteadyJit: double.Parse(parts[6], CultureInfo.InvariantCulture))).ToList();
        var bare = figures.Where(f => f.Variant == "bare").ToList();
        var (bareFirst, bareSteady, bareItems) = bare.Count == 0 ? (0.0, 0.0, 0.0) : (bare.Average(f => f.First), bare.Average(f => f.Steady), bare.Average(f => f.Items));

        // Pool work items a second in the steady window: on an idle app each is a pool thread woken, which
        // spins before it sleeps again; that, not the work itself, was most of the cost measured (perf).
        var firstTitle = first == 60 ? "first minute ms/s" : string.Create(CultureInfo.InvariantCulture, $"first {first} s ms/s");
        Console.WriteLine($"  {"variant",-16} {firstTitle,18} {"added",7} {"steady ms/s",12} {"added",7} {"pool items/s",13} {"added",7}");
        foreach (var (variant, f, steady, items, _, _, _) in figures)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  {variant,-16} {f,18:F2} {f - bareFirst,7:F2} {steady,12:F2} {steady - bareSteady,7:F2} {items,13:F2} {items - bareItems,7:F2}"));
        }

        // The JIT's share of it: its time over the first window (ms in all, and methods compiled), and ms/s in the steady one.
        Console.WriteLine($"  {"variant",-16} {"JIT ms, first",14} {"methods",8} {"JIT ms/s, steady",17}");
        foreach (var (variant, _, _, _, jit, methods, steadyJit) in figures)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {variant,-16} {jit,14:F0} {methods,8} {steadyJit,17:F3}"));
        }

        if (copies > 1)
        {
            foreach (var group in figures.GroupBy(f => f.Variant))
            {
                var (f, steady, items) = (group.Average(x => x.First), group.Average(x => x.Steady), group.Average(x => x.Items));
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  {group.Key + " (mean)",-16} {f,18:F2} {f - bareFirst,7:F2} {steady,12:F2} {steady - bareSteady,7:F2} {items,13:F2} {items - bareItems,7:F2}"));
            }
        }

        return 0;
    }

    /// <summary>One idle app: prints "variant firstMinuteMsPerSecond steadyMsPerSecond".</summary>
    public static async Task<int> RunAppAsync(string[] args)
    {
        var (variant, endpoint) = (args[0], args[1]);
        var (warmup, measure, firstMinute) = (int.Parse(args[2], CultureInfo.InvariantCulture), int.Parse(args[3], CultureInfo.InvariantCulture), int.Parse(args[4], CultureInfo.InvariantCulture));
        await using var multiplexer = await ConnectionMultiplexer.ConnectAsync(endpoint);
        var builder = WebApplication.CreateBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Services.AddSingleton<IConnectionMultiplexer>(multiplexer);
        foreach (var setting in args[5..])
        {
            // Ablations from the command line: idle-app muxwatch ... MuxWatch:ServerPolling=false
            var at = setting.IndexOf('=', StringComparison.Ordinal);
            builder.Configuration[setting[..at]] = setting[(at + 1)..];
        }

        if (variant.StartsWith("muxwatch", StringComparison.Ordinal))
        {
            builder.Services.AddMuxWatch().UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry()).AddMultiplexer("app", sp => sp.GetRequiredService<IConnectionMultiplexer>());
        }
        else if (variant == "healthchecks")
        {
            builder.Services.AddHealthChecks().AddRedis(multiplexer);
            builder.Services.Configure<HealthCheckPublisherOptions>(options =>
            {
                options.Delay = TimeSpan.Zero;
                options.Period = TimeSpan.FromSeconds(1);
            });
            builder.Services.AddSingleton<IHealthCheckPublisher, AppCost.DiscardingPublisher>();
        }

        await using var app = builder.Build();
        app.MapGet("/", () => Results.Text("idle"));
        await app.StartAsync();

        var started = Environment.CpuUsage.TotalTime;
        // The JIT's own account (its time and methods compiled), beside the CPU: an idle app's first minutes are mostly
        // the JIT compiling, instrumenting and recompiling the code that runs periodically (docs/benchmarks.md).
        var (jitStarted, methodsStarted) = (System.Runtime.JitInfo.GetCompilationTime(), System.Runtime.JitInfo.GetCompiledMethodCount());
        await Task.Delay(TimeSpan.FromSeconds(firstMinute));
        var first = (Environment.CpuUsage.TotalTime - started).TotalMilliseconds / firstMinute;
        var firstJit = (System.Runtime.JitInfo.GetCompilationTime() - jitStarted).TotalMilliseconds;
        var firstMethods = System.Runtime.JitInfo.GetCompiledMethodCount() - methodsStarted;
        await Task.Delay(TimeSpan.FromSeconds(warmup - firstMinute));
        var before = Environment.CpuUsage.TotalTime;
        var jitBefore = System.Runtime.JitInfo.GetCompilationTime();
        var itemsBefore = ThreadPool.CompletedWorkItemCount;
        var thrown = new System.Collections.Concurrent.ConcurrentDictionary<string, int>();
        void Count(object? sender, System.Runtime.ExceptionServices.FirstChanceExceptionEventArgs e) => thrown.AddOrUpdate(e.Exception.GetType().Name + ": " + e.Exception.Message.Split('\n')[0], 1, (_, n) => n + 1);
        AppDomain.CurrentDomain.FirstChanceException += Count;
        await Task.Delay(TimeSpan.FromSeconds(measure));
        AppDomain.CurrentDomain.FirstChanceException -= Count;
        foreach (var (what, count) in thrown.OrderByDescending(p => p.Value).Take(5))
        {
            // What the app threw while idle (stderr: the parent reads stdout only).
            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{variant}: {count / (double)measure:F2} first-chance exceptions/s: {what}"));
        }

        var steady = (Environment.CpuUsage.TotalTime - before).TotalMilliseconds / measure;
        var itemsPerSecond = (double)(ThreadPool.CompletedWorkItemCount - itemsBefore) / measure;
        var steadyJit = (System.Runtime.JitInfo.GetCompilationTime() - jitBefore).TotalMilliseconds / measure;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{variant} {first:F3} {steady:F3} {itemsPerSecond:F2} {firstJit:F0} {firstMethods} {steadyJit:F3}"));
        await app.StopAsync();
        return 0;
    }
}
