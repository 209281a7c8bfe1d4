using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// How near the next fork's projection lands to the real fork, on a real redis-server watched by MuxWatch in
/// this process: a dataset saved once, then grown step by step (<c>--steps</c> sizes, in thousands of keys);
/// before each save the projection is read, and after it the fork's own pause. Printed as ratios: the
/// projection over the real fork, and the last fork's own figure over it (what a user reading
/// <c>latest_fork_usec</c> alone would expect). Fork pauses of a few milliseconds move with the machine and its
/// load, which is why this is a benchmark and not a test.
/// </summary>
internal static class ForkProjection
{
    public static async Task<int> RunAsync(string[] args)
    {
        var steps = (args.SkipWhile(a => a != "--steps").Skip(1).FirstOrDefault() ?? "400,4000,8000")
            .Split(',').Select(s => int.Parse(s, CultureInfo.InvariantCulture) * 1000).ToArray();
        await using var redis = await RedisServer.StartAsync();
        await using var app = await ConnectionMultiplexer.ConnectAsync($"{redis.EndPoint},abortConnect=false");
        var registry = Metrics.NewCustomRegistry();
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:ServerPollInterval"] = "00:00:00.200";
        builder.Services.AddMuxWatch().UseMetricsRegistry(registry).AddMultiplexer("app", _ => app);
        using var host = builder.Build();
        await host.StartAsync();

        async Task<double?> GaugeAsync(string family)
        {
            using var stream = new MemoryStream();
            await registry.CollectAndExportAsTextAsync(stream);
            return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray())).Value(family, ("endpoint", redis.EndPoint));
        }

        async Task<double?> UntilAsync(Func<Task<double?>> read, Func<double, bool> done, int seconds = 60)
        {
            var deadline = DateTime.UtcNow.AddSeconds(seconds);
            while (DateTime.UtcNow < deadline)
            {
                if (await read() is { } value && done(value))
                {
                    return value;
                }

                await Task.Delay(100);
            }

            return null;
        }

        await UntilAsync(() => GaugeAsync("muxwatch_server_forks_total"), _ => true);
        Console.WriteLine("fork-projection: keys, projected ms, real fork ms, projected/real, last fork/real");
        double? lastFork = null;
        var lastProjected = 0.0;
        var populated = 0;
        foreach (var keys in steps)
        {
            await redis.CommandAsync("DEBUG", "POPULATE", keys.ToString(CultureInfo.InvariantCulture));
            populated = Math.Max(populated, keys);
            // The projection once a poll has read the grown memory (a small dataset stays at the 32 MB floor: unchanged).
            var projected = lastFork is null ? null
                : await UntilAsync(() => GaugeAsync("muxwatch_server_next_fork_projected_seconds"), v => v != lastProjected, seconds: 5)
                    ?? await GaugeAsync("muxwatch_server_next_fork_projected_seconds");
            var forks = await GaugeAsync("muxwatch_server_forks_total") ?? 0;
            await redis.CommandAsync("BGSAVE");
            await UntilAsync(() => GaugeAsync("muxwatch_server_forks_total"), v => v > forks);
            var real = (await GaugeAsync("muxwatch_server_latest_fork_seconds"))!.Value;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  {populated,9} {Ms(projected),10} {real * 1000,12:0.00} {Ratio(projected, real),14} {Ratio(lastFork, real),15}"));
            lastFork = real;
            lastProjected = await UntilAsync(() => GaugeAsync("muxwatch_server_next_fork_projected_seconds"), _ => true) ?? 0;
            await UntilAsync(async () => await redis.CommandAsync("INFO", "persistence") is var info && !info.Contains("rdb_bgsave_in_progress:1", StringComparison.Ordinal) ? 1 : null, _ => true);
        }

        await host.StopAsync();
        return 0;
    }

    private static string Ms(double? seconds) => seconds is { } s ? (s * 1000).ToString("0.00", CultureInfo.InvariantCulture) : "-";

    private static string Ratio(double? value, double real) => value is { } v && real > 0 ? (v / real).ToString("0.00", CultureInfo.InvariantCulture) : "-";
}
