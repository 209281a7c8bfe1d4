using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The sidecar as deployed, at 10, 100 and 500 endpoints: its steady working set, and the time and
/// bytes of a <c>/metrics</c> scrape over HTTP, side by side with Debian's
/// <c>prometheus-redis-exporter</c> scraping the same servers. The service runs as a real process
/// (the built <c>MuxWatch.Tool.dll</c>), the targets given through its environment, as a
/// deployment would. Prints figures; asserts nothing.
/// </summary>
internal static class SidecarScale
{
    private const string Exporter = "/usr/bin/prometheus-redis-exporter";

    public static async Task<int> RunAsync(string[] args)
    {
        var counts = ProbeScaling.StringOption(args, "--counts", "10,100,500").Split(',').Select(c => int.Parse(c, CultureInfo.InvariantCulture)).ToArray();
        var perServer = HookOverhead.IntOption(args, "--per-server", 10);
        var settle = TimeSpan.FromSeconds(HookOverhead.IntOption(args, "--settle-seconds", 30));
        var scrapes = HookOverhead.IntOption(args, "--scrapes", 200);
        var gcModes = ProbeScaling.StringOption(args, "--gc", "default,workstation").Split(',');

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"sidecar-scale: {string.Join('/', counts)} endpoints ({perServer} targets per redis-server), settle {settle.TotalSeconds:0} s, {scrapes} scrapes, GC {string.Join('/', gcModes)}, {Environment.ProcessorCount} cores"));
        var servers = new List<RedisServer>();
        try
        {
            foreach (var count in counts)
            {
                while (servers.Count * perServer < count)
                {
                    servers.Add(await RedisServer.StartAsync());
                }

                foreach (var gc in gcModes)
                {
                    await MeasureSidecarAsync(count, gc, servers, perServer, settle, scrapes);
                }
            }

            await MeasureExporterAsync(servers, scrapes);
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

    private static async Task MeasureSidecarAsync(int count, string gc, List<RedisServer> servers, int perServer, TimeSpan settle, int scrapes)
    {
        var port = FreePort.Next();
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{port}");
        for (var i = 0; i < count; i++)
        {
            info.Environment[$"MuxWatch__Targets__{i}__Name"] = $"app-{i}";
            info.Environment[$"MuxWatch__Targets__{i}__ConnectionString"] = servers[i / perServer].EndPoint;
        }

        info.Environment["Logging__LogLevel__Default"] = "Warning";
        if (gc == "workstation")
        {
            info.Environment["DOTNET_gcServer"] = "0";
        }

        using var process = StartDiscardingOutput(info, "the service");
        using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
        try
        {
            var started = Stopwatch.StartNew();
            while (await ConnectedTargetsAsync(client) < count)
            {
                if (process.HasExited || started.Elapsed > TimeSpan.FromMinutes(3))
                {
                    throw new InvalidOperationException($"the sidecar did not connect {count} targets (exited: {process.HasExited})");
                }

                await Task.Delay(200);
            }

            var connectedAfter = started.Elapsed;
            await Task.Delay(settle); // steady state: every target polled many times, the first GCs behind
            var workingSets = new List<double>();
            for (var i = 0; i < 10; i++)
            {
                workingSets.Add(ResidentMegabytes(process.Id));
                await Task.Delay(1000);
            }

            var (medianMs, minMs, maxMs, bytes, series, cpuMs) = await ScrapeAsync(client, "/metrics", scrapes, process);
            var afterScrapes = ResidentMegabytes(process.Id);
            workingSets.Sort();
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  MuxWatch sidecar, {count,3} endpoints, GC {gc,-11}: connected in {connectedAfter.TotalSeconds:F1} s; working set {workingSets[workingSets.Count / 2]:F0} MB (min {workingSets[0]:F0}, max {workingSets[^1]:F0}; {afterScrapes:F0} after the scrapes); /metrics {medianMs:F2} ms median ({minMs:F2}-{maxMs:F2}), server CPU {cpuMs:F2} ms a scrape, {bytes / 1024.0:F0} KB, {series} series ({(double)series / count:F1} per endpoint)"));
        }
        finally
        {
            await StopAsync(process);
        }
    }

    /// <summary>Debian's redis_exporter, multi-target mode: one scrape per server, as Prometheus would run them.</summary>
    private static async Task MeasureExporterAsync(List<RedisServer> servers, int scrapes)
    {
        if (!File.Exists(Exporter))
        {
            Console.WriteLine($"  redis_exporter: {Exporter} is not installed (apt-get install prometheus-redis-exporter); left out");
            return;
        }

        var port = FreePort.Next();
        using var process = StartDiscardingOutput(new ProcessStartInfo(Exporter, ["-web.listen-address", $"127.0.0.1:{port}"]), "redis_exporter");
        using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
        try
        {
            var started = Stopwatch.StartNew();
            while (!await AnswersAsync(client))
            {
                if (process.HasExited || started.Elapsed > TimeSpan.FromSeconds(30))
                {
                    throw new InvalidOperationException("redis_exporter did not answer");
                }

                await Task.Delay(100);
            }

            var sample = servers.Take(10).ToList();
            var results = new List<(double Median, double Min, double Max, long Bytes, int Series, double? CpuMs)>();
            foreach (var server in sample)
            {
                results.Add(await ScrapeAsync(client, $"/scrape?target=redis://{server.EndPoint}", scrapes, process));
            }

            var median = results.Select(r => r.Median).Order().ToList()[results.Count / 2];
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  redis_exporter ({Version()}), one scrape per server over {sample.Count} servers: {median:F2} ms median per server ({results.Min(r => r.Min):F2}-{results.Max(r => r.Max):F2}), CPU {results.Select(r => r.CpuMs ?? 0).Order().ToList()[results.Count / 2]:F2} ms a scrape, {results[0].Bytes / 1024.0:F0} KB, {results[0].Series} series per server; working set {ResidentMegabytes(process.Id):F0} MB"));
        }
        finally
        {
            await StopAsync(process);
        }
    }

    /// <summary>Starts a process whose output is read and dropped, so a full pipe never blocks it.</summary>
    internal static Process StartDiscardingOutput(ProcessStartInfo info, string what)
    {
        info.RedirectStandardOutput = true;
        info.RedirectStandardError = true;
        var process = Process.Start(info) ?? throw new InvalidOperationException($"{what} did not start");
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    internal static async Task StopAsync(Process process)
    {
        if (!process.HasExited)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }
    }

    /// <summary>
    /// Times <paramref name="scrapes"/> scrapes as a scraper makes them: curl on one kept-alive connection,
    /// the body read and dropped, each timed by curl itself (a .NET client in this process measured
    /// 2-3x slower than the server answered: its own decoding and tiered JIT, not the server's cost),
    /// after as many warm-up scrapes, up to 50. With <paramref name="server"/>, also the CPU the server spent per
    /// scrape: its CPU time over the scrapes less its CPU time over as long a quiet window right after.
    /// </summary>
    private static async Task<(double Median, double Min, double Max, long Bytes, int Series, double? CpuMs)> ScrapeAsync(HttpClient client, string path, int scrapes, Process? server = null)
    {
        // Warm-ups: a scraper scrapes for the process's whole life, so what counts is the steady cost; a
        // JIT-compiled server renders its first few dozen scrapes with unoptimized code (about twice the CPU).
        var text = string.Empty;
        for (var i = 0; i < Math.Min(scrapes, 50); i++)
        {
            text = await client.GetStringAsync(new Uri(path, UriKind.Relative));
        }

        var series = text.Split('\n').Count(l => l.Length > 0 && l[0] != '#');
        var cpuBefore = CpuTime(server);
        var window = Stopwatch.StartNew();
        var times = await TimedByCurlAsync(new Uri(client.BaseAddress!, path), scrapes);
        var scraping = window.Elapsed;
        var cpuScraping = CpuTime(server) - cpuBefore;
        await Task.Delay(scraping);
        var cpuQuiet = CpuTime(server) - cpuBefore - cpuScraping;
        double? cpuMs = server is null ? null : (cpuScraping - cpuQuiet).TotalMilliseconds / scrapes;
        return (times[times.Count / 2], times[0], times[^1], System.Text.Encoding.UTF8.GetByteCount(text), series, cpuMs);
    }

    /// <summary><paramref name="count"/> requests for <paramref name="url"/> by one curl on one kept-alive connection, each timed by curl: milliseconds, in order.</summary>
    internal static async Task<List<double>> TimedByCurlAsync(Uri url, int count) =>
        [.. (await TimedByOneCurlAsync(Enumerable.Repeat(url, count))).Order()];

    /// <summary>
    /// <paramref name="pairs"/> requests for each of <paramref name="a"/> and <paramref name="b"/>, in turns (a then b, then
    /// b then a, and so on), by one curl keeping both connections alive, each timed by curl: milliseconds, in order, for each.
    /// </summary>
    internal static async Task<(List<double> A, List<double> B)> TimedInPairsByCurlAsync(Uri a, Uri b, int pairs)
    {
        var times = await TimedByOneCurlAsync(Enumerable.Range(0, pairs).SelectMany(pair => pair % 2 == 0 ? [a, b] : (Uri[])[b, a]));
        List<double> first = [], second = [];
        for (var i = 0; i < times.Count; i++)
        {
            var aFirst = i / 2 % 2 == 0;
            (aFirst == (i % 2 == 0) ? first : second).Add(times[i]);
        }

        return (first, second);
    }

    /// <summary>The <paramref name="urls"/> requested in order by one curl, which keeps its connections alive; each request's time in ms, in the same order.</summary>
    private static async Task<List<double>> TimedByOneCurlAsync(IEnumerable<Uri> urls)
    {
        var curl = new ProcessStartInfo("curl") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        curl.ArgumentList.Add("-s");
        curl.ArgumentList.Add("-w");
        curl.ArgumentList.Add("%{time_total}\n");
        foreach (var url in urls)
        {
            curl.ArgumentList.Add("-o");
            curl.ArgumentList.Add("/dev/null");
            curl.ArgumentList.Add(url.ToString());
        }

        var (exitCode, output, error) = await BuiltProgram.RunAsync(curl, timeout: TimeSpan.FromMinutes(5));
        if (exitCode != 0)
        {
            throw new InvalidOperationException($"curl failed ({exitCode}): {error}");
        }

        // curl writes one time per request, in the order the requests were given.
        return [.. output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(t => double.Parse(t, CultureInfo.InvariantCulture) * 1000)];
    }

    internal static TimeSpan CpuTime(Process? process)
    {
        if (process is null)
        {
            return TimeSpan.Zero;
        }

        process.Refresh();
        return process.TotalProcessorTime;
    }

    internal static async Task<int> ConnectedTargetsAsync(HttpClient client)
    {
        try
        {
            using var answer = JsonDocument.Parse(await client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
            return answer.RootElement.GetProperty("targets").EnumerateArray().Count(t => t.GetProperty("state").GetString() == "connected");
        }
        catch (Exception ex) when (ex is HttpRequestException or TaskCanceledException or JsonException or KeyNotFoundException)
        {
            return 0; // not up yet
        }
    }

    internal static async Task<bool> AnswersAsync(HttpClient client)
    {
        try
        {
            return (await client.GetAsync(new Uri("/", UriKind.Relative))).IsSuccessStatusCode;
        }
        catch (HttpRequestException)
        {
            return false;
        }
    }

    /// <summary>The resident set (what <c>ps</c> and the kubelet call the working set, near enough) from <c>/proc</c>.</summary>
    internal static double ResidentMegabytes(int pid)
    {
        var line = File.ReadLines($"/proc/{pid}/status").First(l => l.StartsWith("VmRSS:", StringComparison.Ordinal));
        return long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture) / 1024.0;
    }

    private static string Version()
    {
        var info = new ProcessStartInfo(Exporter, ["-version"]) { RedirectStandardOutput = true, RedirectStandardError = true };
        using var process = Process.Start(info)!;
        var text = process.StandardOutput.ReadToEnd() + process.StandardError.ReadToEnd();
        process.WaitForExit();
        var at = text.IndexOf("Redis Metrics Exporter ", StringComparison.Ordinal);
        return at >= 0 ? text[at..].Split('\n')[0].Trim() : "version unknown";
    }
}
