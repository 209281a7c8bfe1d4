using System.Diagnostics;
using System.Globalization;
using MuxWatch.Testing;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The floor under a <c>/metrics</c> figure, measured in the same run: prometheus-net alone, serving a registry that
/// holds the same families and series as a scrape (gauges, counters and histograms, each as it is: the same lines),
/// from a minimal ASP.NET Core app of its own (bench/MuxWatch.PrometheusFloor), timed by the same curl on one kept-alive
/// connection once warm. What any exporter built on prometheus-net takes to render and send that many series on this
/// machine; MuxWatch's own answer is measured against it. The floor is built as the sidecar it is compared with: run by
/// <c>dotnet</c> for the JIT build, published native for the native one (native code renders prometheus-net's text about a
/// third slower than the JIT's, measured 2026-11-29: that is the compiler's cost, not MuxWatch's).
/// </summary>
internal static class PrometheusNetFloor
{
    /// <summary>
    /// The median time, in ms, prometheus-net alone takes to serve the series of <paramref name="scraped"/>, over
    /// <paramref name="scrapes"/> scrapes: run by <c>dotnet</c>, or as <paramref name="nativeExecutable"/> when given.
    /// </summary>
    public static async Task<double> MedianAsync(string scraped, int scrapes, string? nativeExecutable = null)
    {
        await using var floor = await StartAsync(scraped, scrapes, nativeExecutable);
        var times = await SidecarScale.TimedByCurlAsync(floor.Metrics, scrapes);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"    prometheus-net alone ({floor.Kind}), the same series: /metrics {times[times.Count / 2]:F2} ms median (after {floor.Warmups} warm-up scrapes)"));
        return times[times.Count / 2];
    }

    /// <summary>
    /// The floor started and warmed, serving the series of <paramref name="scraped"/>: the caller times it (beside what it
    /// is compared with, a scrape of each in turn) and disposes of it. The series are made family by family, or with
    /// <paramref name="targetByTarget"/> target by target, as a running exporter makes them (FloorRegistry).
    /// </summary>
    public static async Task<Running> StartAsync(string scraped, int scrapes, string? nativeExecutable = null, bool targetByTarget = false)
    {
        var file = Path.Combine(Path.GetTempPath(), $"muxwatch-floor-{Environment.ProcessId}-{Guid.NewGuid():N}.txt");
        await File.WriteAllTextAsync(file, scraped);
        var port = FreePort.Next();
        var url = $"http://127.0.0.1:{port}";
        string[] arguments = targetByTarget ? [file, url, "--target-by-target"] : [file, url];
        var info = nativeExecutable is null
            ? BuiltProgram.StartInfo("MuxWatch.PrometheusFloor", arguments)
            : new ProcessStartInfo(nativeExecutable, arguments) { RedirectStandardInput = true };
        var process = SidecarScale.StartDiscardingOutput(info, "the prometheus-net floor");
        var running = new Running(process, file, new Uri($"{url}/metrics"), nativeExecutable is null ? "dotnet" : "native", targetByTarget);
        try
        {
            using var client = new HttpClient { BaseAddress = new Uri(url), Timeout = TimeSpan.FromSeconds(30) };
            var starting = Stopwatch.StartNew();
            while (await CompiledMethodsAsync(client) is null)
            {
                if (process.HasExited || starting.Elapsed > TimeSpan.FromMinutes(1))
                {
                    throw new InvalidOperationException($"the prometheus-net floor did not answer (exited: {process.HasExited})");
                }

                await Task.Delay(100);
            }

            // Warmed until the floor's JIT has compiled nothing for a whole second of scrapes (at least as many warm-ups as
            // timed scrapes; a native floor compiles nothing). With only as many warm-ups as timed scrapes, a JIT floor came
            // out at 13 ms in one run and 33-35 ms in the two before it on the same build: timed while still being recompiled.
            var last = await CompiledMethodsAsync(client);
            var quietSince = Stopwatch.StartNew();
            while (running.Warmups < 20 * scrapes && (running.Warmups < scrapes || quietSince.Elapsed < TimeSpan.FromSeconds(1)))
            {
                _ = await client.GetStringAsync(new Uri("/metrics", UriKind.Relative));
                running.Warmups++;
                if (await CompiledMethodsAsync(client) is var compiled && compiled != last)
                {
                    (last, quietSince) = (compiled, Stopwatch.StartNew());
                }
            }

            return running;
        }
        catch
        {
            await running.DisposeAsync();
            throw;
        }
    }

    /// <summary>A started floor: its <c>/metrics</c> address, how it was built, in what order its series were made, how many scrapes warmed it.</summary>
    internal sealed class Running(Process process, string file, Uri metrics, string kind, bool targetByTarget) : IAsyncDisposable
    {
        public Uri Metrics => metrics;

        public string Kind => kind;

        /// <summary>How its series were made, as the benchmark prints it.</summary>
        public string Order => targetByTarget ? "made target by target" : "made family by family";

        public int Warmups { get; set; }

        public async ValueTask DisposeAsync()
        {
            await SidecarScale.StopAsync(process);
            process.Dispose();
            File.Delete(file);
        }
    }

    /// <summary>How many methods the floor's JIT has compiled; null while it does not answer yet.</summary>
    private static async Task<long?> CompiledMethodsAsync(HttpClient client)
    {
        try
        {
            return long.Parse(await client.GetStringAsync(new Uri("/jit", UriKind.Relative)), CultureInfo.InvariantCulture);
        }
        catch (HttpRequestException)
        {
            return null;
        }
    }
}
