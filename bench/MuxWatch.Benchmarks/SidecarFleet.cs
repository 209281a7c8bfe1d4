using System.Diagnostics;
using System.Globalization;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The sidecar watching a fleet of separate endpoints, as a user means "500 endpoints": each redis-server
/// listens on several loopback addresses (127.0.0.1 to 127.0.0.N), and every address is a target of its own, so
/// the sidecar holds one multiplexer, one polling connection and one witness per endpoint, as it would for 500
/// servers. Measured while nothing is wrong, for each endpoint count and each build (the native one the container
/// ships, the JIT one of <c>dotnet run</c> and the tool): the sidecar's CPU (ms a second) and resident set (median
/// and peak), its <c>/metrics</c> (median and p95 over scrapes on one kept-alive connection), and what watching
/// costs each server, from the server's own <c>INFO commandstats</c> (µs a second spent on MuxWatch's commands,
/// by command, per endpoint) beside <c>prometheus-redis-exporter</c> scraping every endpoint at a 15 s interval.
/// Ends with one table of every figure and the ratios between the counts. Prints figures; asserts nothing.
/// </summary>
internal static class SidecarFleet
{
    private const string Exporter = "/usr/bin/prometheus-redis-exporter";

    /// <summary>One measurement of the sidecar (or, with <see cref="Build"/> "redis_exporter", of the exporter).</summary>
    private sealed record Figures(string Build, int Endpoints, double CpuMsPerSecond, double ResidentMedian, double ResidentPeak,
        double ScrapeMedian, double ScrapeP95, double ScrapeKilobytes, int Series, double ServerMicroseconds, double ServerCalls)
    {
        /// <summary>prometheus-net alone serving the same series in the same run, built as this build is (<see cref="PrometheusNetFloor"/>); 0 when not measured.</summary>
        public double FloorMedian { get; init; }

        /// <summary>For the native build, prometheus-net alone run by <c>dotnet</c> as well: the native compiler's own cost; 0 otherwise.</summary>
        public double DotnetFloorMedian { get; init; }

        /// <summary>
        /// <c>/metrics</c> against prometheus-net alone with the same series made target by target, as a running exporter
        /// makes them (the floor makes them family by family): MuxWatch's own share; 0 when not measured.
        /// </summary>
        public double TargetByTargetFloorRatio { get; init; }
    }

    public static async Task<int> RunAsync(string[] args)
    {
        var addresses = Math.Clamp(HookOverhead.IntOption(args, "--addresses", 10), 1, 250);
        var counts = StringOption(args, "--counts", "50,500").Split(',').Select(c => int.Parse(c, CultureInfo.InvariantCulture)).Order().ToList();
        var builds = StringOption(args, "--builds", "native,jit").Split(',').ToList();
        var warmup = TimeSpan.FromSeconds(HookOverhead.IntOption(args, "--warmup-seconds", 120));
        var window = TimeSpan.FromSeconds(HookOverhead.IntOption(args, "--window-seconds", 60));
        var scrapes = HookOverhead.IntOption(args, "--scrapes", 50);
        var keys = HookOverhead.IntOption(args, "--keys", 10_000);
        var skipExporter = args.Contains("--no-exporter");
        // --set MuxWatch:Key=value (repeatable): a setting given to the sidecar, to compare settings on one build.
        var settings = args.Select((a, i) => (a, i)).Where(p => p.a == "--set" && p.i + 1 < args.Length).Select(p => args[p.i + 1]).ToList();
        // --env NAME=value (repeatable): an environment variable of the sidecar's process (the runtime's GC settings).
        var environment = args.Select((a, i) => (a, i)).Where(p => p.a == "--env" && p.i + 1 < args.Length).Select(p => args[p.i + 1]).ToList();
        settings.AddRange(environment.Select(e => "env:" + e));
        var serverCount = (counts[^1] + addresses - 1) / addresses;
        var native = builds.Contains("native") ? await NativeBuildAsync() : null;
        var nativeFloor = builds.Contains("native") ? await PublishNativeAsync("MuxWatch.PrometheusFloor", Path.Combine("bench", "MuxWatch.PrometheusFloor"), "bench-native-floor") : null;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"sidecar-fleet{(settings.Count > 0 ? $" ({string.Join(", ", settings)})" : "")}: {string.Join(" and ", counts)} separate endpoints (up to {serverCount} redis-servers x {addresses} loopback addresses, {keys:N0} keys each), builds {string.Join(", ", builds)}, warm-up {warmup.TotalSeconds:0} s, window {window.TotalSeconds:0} s, {scrapes} scrapes, {Environment.ProcessorCount} cores"));

        var bind = new List<string> { "--bind" };
        bind.AddRange(Enumerable.Range(1, addresses).Select(a => $"127.0.0.{a}"));
        var servers = new List<RedisServer>();
        var results = new List<Figures>();
        try
        {
            for (var i = 0; i < serverCount; i++)
            {
                servers.Add(await RedisServer.StartAsync([.. bind]));
            }

            var adminOptions = new ConfigurationOptions { AllowAdmin = true };
            servers.ForEach(s => adminOptions.EndPoints.Add(s.EndPoint));
            await using var admin = await ConnectionMultiplexer.ConnectAsync(adminOptions);
            foreach (var server in servers)
            {
                await admin.GetServer(server.EndPoint).ExecuteAsync("DEBUG", "POPULATE", keys);
            }

            var allEndpoints = servers.SelectMany(s => Enumerable.Range(1, addresses).Select(a => $"127.0.0.{a}:{s.Port}")).ToList();
            foreach (var build in builds)
            {
                // The service as that build: the native executable, or the built dll run by dotnet.
                Environment.SetEnvironmentVariable(BuiltProgram.ServiceExecutableVariable, build == "native" ? native : null);
                Console.WriteLine($"  {build}: {BuiltProgram.StartInfo("MuxWatch.Tool").FileName}");
                foreach (var count in counts)
                {
                    var used = servers.Take((count + addresses - 1) / addresses).ToList();
                    results.Add(await MeasureSidecarAsync(build, allEndpoints.Take(count).ToList(), used, admin, settings, warmup, window, scrapes, build == "native" ? nativeFloor : null));
                }
            }

            if (!skipExporter && await MeasureExporterAsync(allEndpoints.Take(counts[^1]).ToList(), servers, admin, window) is { } exporter)
            {
                results.Add(exporter);
            }
        }
        finally
        {
            foreach (var server in servers)
            {
                await server.DisposeAsync();
            }
        }

        PrintTable(results, counts);
        return 0;
    }

    private static string StringOption(string[] args, string name, string fallback)
    {
        var at = Array.IndexOf(args, name);
        return at >= 0 && at + 1 < args.Length ? args[at + 1] : fallback;
    }

    /// <summary>
    /// The native build: <c>MUXWATCH_SERVICE_EXECUTABLE</c> when it names one (test.sh's, the container's), else
    /// published here as the Dockerfile publishes it (about two minutes), into artifacts/bench-native.
    /// </summary>
    private static async Task<string> NativeBuildAsync() =>
        Environment.GetEnvironmentVariable(BuiltProgram.ServiceExecutableVariable) is { Length: > 0 } given
            ? given
            : await PublishNativeAsync("MuxWatch.Tool", Path.Combine("src", "MuxWatch.Tool"), "bench-native");

    /// <summary>Publishes <paramref name="project"/> native as the Dockerfile publishes the service, into artifacts/<paramref name="folder"/>; returns the executable.</summary>
    private static async Task<string> PublishNativeAsync(string project, string directory, string folder)
    {
        var output = Path.Combine(BuiltProgram.RepositoryRoot, "artifacts", folder);
        Console.WriteLine($"publishing {project} native as the Dockerfile does, into {output} ...");
        var publish = new ProcessStartInfo("dotnet", ["publish", Path.Combine(BuiltProgram.RepositoryRoot, directory, project + ".csproj"),
            "-c", "Release", "--use-current-runtime", "-p:PublishAot=true", "-p:DebugType=none", "-p:GenerateDocumentationFile=false", "-o", output, "-nologo", "-v", "quiet"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
        };
        var (exitCode, text, error) = await BuiltProgram.RunAsync(publish, timeout: TimeSpan.FromMinutes(10));
        if (exitCode != 0)
        {
            throw new InvalidOperationException($"the native publish of {project} failed ({exitCode}): {error}{text}");
        }

        return Path.Combine(output, project);
    }

    /// <summary>Every figure in one table, then how each grew from the smallest count to the largest, and MuxWatch's cost to a server against redis_exporter's.</summary>
    private static void PrintTable(List<Figures> results, List<int> counts)
    {
        Console.WriteLine();
        Console.WriteLine("| build | endpoints | sidecar CPU | µs/s an endpoint | resident median / peak | `/metrics` median / p95 | scrape | series | each server: the watcher's commands |");
        Console.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var r in results)
        {
            Console.WriteLine(r.Build == "redis_exporter"
                ? string.Create(CultureInfo.InvariantCulture, $"| redis_exporter (every 15 s) | {r.Endpoints} | {r.CpuMsPerSecond:F1} ms/s | {r.CpuMsPerSecond * 1000 / r.Endpoints:F0} | | | | | {r.ServerMicroseconds:F1} µs/s ({r.ServerCalls:F2} calls/s) |")
                : string.Create(CultureInfo.InvariantCulture, $"| {r.Build} | {r.Endpoints} | {r.CpuMsPerSecond:F1} ms/s | {r.CpuMsPerSecond * 1000 / r.Endpoints:F0} | {r.ResidentMedian:F0} / {r.ResidentPeak:F0} MB | {r.ScrapeMedian:F2} / {r.ScrapeP95:F2} ms | {r.ScrapeKilobytes:F0} KB | {r.Series:N0} | {r.ServerMicroseconds:F1} µs/s ({r.ServerCalls:F2} calls/s) |"));
        }

        if (counts.Count > 1)
        {
            var (small, large) = (counts[0], counts[^1]);
            foreach (var build in results.Select(r => r.Build).Where(b => b != "redis_exporter").Distinct())
            {
                if (results.FirstOrDefault(r => r.Build == build && r.Endpoints == small) is { } a && results.FirstOrDefault(r => r.Build == build && r.Endpoints == large) is { } b)
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{build}, {small} to {large} endpoints ({(double)large / small:F0} times): CPU x{b.CpuMsPerSecond / a.CpuMsPerSecond:F1}, resident peak x{b.ResidentPeak / a.ResidentPeak:F1}, scrape median x{b.ScrapeMedian / a.ScrapeMedian:F1}, series x{(double)b.Series / a.Series:F1}"));
                }
            }
        }

        // Issue 52's goals, as ratios measured in this run (they hold from machine to machine) and one absolute.
        Console.WriteLine();
        foreach (var r in results.Where(r => r.Build != "redis_exporter"))
        {
            var exporterCpu = results.FirstOrDefault(e => e.Build == "redis_exporter" && e.Endpoints == r.Endpoints)?.CpuMsPerSecond;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"goals, {r.Build} at {r.Endpoints}: CPU / redis_exporter's {(exporterCpu is > 0 and var e ? (r.CpuMsPerSecond / e).ToString("F2", CultureInfo.InvariantCulture) : "n/a")} (at most 0.33); "
                + $"/metrics / prometheus-net alone built the same way {(r.FloorMedian > 0 ? (r.ScrapeMedian / r.FloorMedian).ToString("F2", CultureInfo.InvariantCulture) : "n/a")} (at most 1.2)"
                + $"{(r.DotnetFloorMedian > 0 ? ", / prometheus-net alone run by dotnet " + (r.ScrapeMedian / r.DotnetFloorMedian).ToString("F2", CultureInfo.InvariantCulture) : "")}"
                + $"{(r.TargetByTargetFloorRatio > 0 ? ", / prometheus-net alone with the series made target by target " + r.TargetByTargetFloorRatio.ToString("F2", CultureInfo.InvariantCulture) : "")}; "
                + $"peak resident {r.ResidentPeak:F0} MB (under 90)"));
        }

        if (counts.Count > 1)
        {
            foreach (var build in results.Select(r => r.Build).Where(b => b != "redis_exporter").Distinct())
            {
                if (results.FirstOrDefault(r => r.Build == build && r.Endpoints == counts[0]) is { } a && results.FirstOrDefault(r => r.Build == build && r.Endpoints == counts[^1]) is { } b)
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"goals, {build}: CPU an endpoint at {counts[^1]} / at {counts[0]}: {(a.CpuMsPerSecond > 0 ? (b.CpuMsPerSecond / b.Endpoints / (a.CpuMsPerSecond / a.Endpoints)).ToString("F2", CultureInfo.InvariantCulture) : "n/a")} (flat: about 1)"));
                }
            }
        }

        if (results.FirstOrDefault(r => r.Build == "redis_exporter") is { } exporter)
        {
            foreach (var r in results.Where(r => r.Build != "redis_exporter" && r.Endpoints == exporter.Endpoints))
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"each server's time on the watcher's commands, MuxWatch ({r.Build}) against redis_exporter: {r.ServerMicroseconds:F1} / {exporter.ServerMicroseconds:F1} µs/s = {r.ServerMicroseconds / exporter.ServerMicroseconds:F2}"));
            }
        }
    }

    private static async Task<Figures> MeasureSidecarAsync(string build, List<string> endpoints, List<RedisServer> servers, ConnectionMultiplexer admin, List<string> settings, TimeSpan warmup, TimeSpan window, int scrapes, string? nativeFloor)
    {
        var port = FreePort.Next();
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", ["--urls", $"http://127.0.0.1:{port}", .. settings.Where(s => !s.StartsWith("env:", StringComparison.Ordinal)).Select(s => "--" + s)]);
        foreach (var variable in settings.Where(s => s.StartsWith("env:", StringComparison.Ordinal)).Select(s => s[4..].Split('=', 2)))
        {
            info.Environment[variable[0]] = variable[1];
        }

        for (var i = 0; i < endpoints.Count; i++)
        {
            info.Environment[$"MuxWatch__Targets__{i}__Name"] = $"app-{i}";
            info.Environment[$"MuxWatch__Targets__{i}__ConnectionString"] = endpoints[i];
        }

        info.Environment["Logging__LogLevel__Default"] = "Warning";
        using var process = SidecarScale.StartDiscardingOutput(info, "the service");
        using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
        try
        {
            var started = Stopwatch.StartNew();
            while (await SidecarScale.ConnectedTargetsAsync(client) < endpoints.Count)
            {
                if (process.HasExited || started.Elapsed > TimeSpan.FromMinutes(5))
                {
                    throw new InvalidOperationException($"the sidecar did not connect {endpoints.Count} targets (exited: {process.HasExited})");
                }

                await Task.Delay(500);
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  {build}, {endpoints.Count} endpoints: connected in {started.Elapsed.TotalSeconds:F1} s; resident {SidecarScale.ResidentMegabytes(process.Id):F0} MB, peak so far {PeakMegabytes(process.Id):F0} MB"));
            await Task.Delay(warmup);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  after the warm-up: resident {SidecarScale.ResidentMegabytes(process.Id):F0} MB, peak so far {PeakMegabytes(process.Id):F0} MB"));

            // While nothing is wrong: the sidecar's CPU and memory, and the servers' time spent on its commands.
            await ResetStatsAsync(admin, servers);
            var cpuBefore = SidecarScale.CpuTime(process);
            var measured = Stopwatch.StartNew();
            var resident = new List<double>();
            while (measured.Elapsed < window)
            {
                resident.Add(SidecarScale.ResidentMegabytes(process.Id));
                await Task.Delay(1000);
            }

            var cpuMsPerSecond = (SidecarScale.CpuTime(process) - cpuBefore).TotalMilliseconds / measured.Elapsed.TotalSeconds;
            var perCommand = await CommandStatsAsync(admin, servers, measured.Elapsed, endpoints.Count);
            resident.Sort();

            var (median, p95, bytes, series, text) = await ScrapeAsync(client, scrapes);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"    the sidecar alone: /metrics {median:F2} ms median, {p95:F2} ms p95 over {scrapes} scrapes"));
            double floorMedian, layoutRatio;
            var pairs = Math.Max(200, 4 * scrapes);
            await using (var floor = await PrometheusNetFloor.StartAsync(text, scrapes, nativeFloor))
            {
                (median, p95, floorMedian) = await InterleavedAsync(new Uri(client.BaseAddress!, "/metrics"), floor, pairs);
            }

            // The same series made target by target, as a running exporter makes them: what is left above that floor is
            // MuxWatch's own (its before-scrape figures, the chunking), the rest the series' places in memory.
            await using (var floor = await PrometheusNetFloor.StartAsync(text, scrapes, nativeFloor, targetByTarget: true))
            {
                var (againstLayout, _, layoutFloor) = await InterleavedAsync(new Uri(client.BaseAddress!, "/metrics"), floor, pairs);
                layoutRatio = againstLayout / layoutFloor;
            }

            var figures = new Figures(build, endpoints.Count, cpuMsPerSecond, resident[resident.Count / 2], PeakMegabytes(process.Id), median, p95, bytes / 1024.0, series,
                perCommand.Values.Sum(v => v.Microseconds), perCommand.Values.Sum(v => v.Calls))
            {
                FloorMedian = floorMedian,
                TargetByTargetFloorRatio = layoutRatio,
                DotnetFloorMedian = nativeFloor is null ? 0 : await PrometheusNetFloor.MedianAsync(text, scrapes),
            };
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  MuxWatch sidecar: CPU {cpuMsPerSecond:F1} ms/s ({cpuMsPerSecond * 1000 / endpoints.Count:F0} µs/s an endpoint); resident {figures.ResidentMedian:F0} MB median, {figures.ResidentPeak:F0} MB peak; /metrics {median:F2} ms median, {p95:F2} ms p95, {bytes / 1024.0:F0} KB, {series:N0} series ({(double)series / endpoints.Count:F1} an endpoint)"));
            PrintServerCost("MuxWatch", perCommand);
            return figures;
        }
        finally
        {
            await SidecarScale.StopAsync(process);
        }
    }

    /// <summary>redis_exporter scraping every endpoint every 15 s for the window, as Prometheus would with one target per endpoint.</summary>
    private static async Task<Figures?> MeasureExporterAsync(List<string> endpoints, List<RedisServer> servers, ConnectionMultiplexer admin, TimeSpan window)
    {
        if (!File.Exists(Exporter))
        {
            Console.WriteLine($"  redis_exporter: {Exporter} is not installed (apt-get install prometheus-redis-exporter); left out");
            return null;
        }

        var port = FreePort.Next();
        using var process = SidecarScale.StartDiscardingOutput(new ProcessStartInfo(Exporter, ["-web.listen-address", $"127.0.0.1:{port}"]), "redis_exporter");
        using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
        try
        {
            var starting = Stopwatch.StartNew();
            while (!await SidecarScale.AnswersAsync(client))
            {
                if (process.HasExited || starting.Elapsed > TimeSpan.FromSeconds(30))
                {
                    throw new InvalidOperationException("redis_exporter did not answer");
                }

                await Task.Delay(100);
            }

            var interval = TimeSpan.FromSeconds(15);
            await ResetStatsAsync(admin, servers);
            var measured = Stopwatch.StartNew();
            var cpuBefore = SidecarScale.CpuTime(process);
            var rounds = 0;
            while (measured.Elapsed < window)
            {
                var round = Stopwatch.StartNew();
                using var gate = new SemaphoreSlim(16);
                await Task.WhenAll(endpoints.Select(async endpoint =>
                {
                    await gate.WaitAsync();
                    try
                    {
                        await client.GetStringAsync(new Uri($"/scrape?target=redis://{endpoint}", UriKind.Relative));
                    }
                    finally
                    {
                        gate.Release();
                    }
                }));
                rounds++;
                var rest = interval - round.Elapsed;
                if (rest > TimeSpan.Zero && measured.Elapsed + rest < window)
                {
                    await Task.Delay(rest);
                }
                else if (rest > TimeSpan.Zero)
                {
                    break;
                }
            }

            var elapsed = measured.Elapsed;
            var cpuMsPerSecond = (SidecarScale.CpuTime(process) - cpuBefore).TotalMilliseconds / elapsed.TotalSeconds;
            var perCommand = await CommandStatsAsync(admin, servers, elapsed, endpoints.Count);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  redis_exporter: {rounds} rounds of {endpoints.Count} scrapes (every 15 s) in {elapsed.TotalSeconds:F0} s; its CPU {cpuMsPerSecond:F1} ms/s"));
            PrintServerCost("redis_exporter", perCommand);
            return new Figures("redis_exporter", endpoints.Count, cpuMsPerSecond, 0, 0, 0, 0, 0, 0,
                perCommand.Values.Sum(v => v.Microseconds), perCommand.Values.Sum(v => v.Calls));
        }
        finally
        {
            await SidecarScale.StopAsync(process);
        }
    }

    private static async Task ResetStatsAsync(ConnectionMultiplexer admin, List<RedisServer> servers)
    {
        foreach (var server in servers)
        {
            await admin.GetServer(server.EndPoint).ConfigResetStatisticsAsync();
        }
    }

    /// <summary>
    /// Each command's calls and microseconds a second per endpoint, summed over the servers' <c>INFO commandstats</c>
    /// since the last reset (the server counts a command once it has run, so this INFO is not among them); the reset itself left out.
    /// </summary>
    private static async Task<SortedDictionary<string, (double Calls, double Microseconds)>> CommandStatsAsync(ConnectionMultiplexer admin, List<RedisServer> servers, TimeSpan elapsed, int endpoints)
    {
        var totals = new SortedDictionary<string, (double Calls, double Microseconds)>(StringComparer.Ordinal);
        foreach (var server in servers)
        {
            var text = await admin.GetServer(server.EndPoint).InfoRawAsync("commandstats");
            foreach (var line in text!.Split('\n'))
            {
                // cmdstat_info:calls=12,usec=345,usec_per_call=28.75,...
                if (!line.StartsWith("cmdstat_", StringComparison.Ordinal) || line.IndexOf(':') is var colon && colon < 0)
                {
                    continue;
                }

                var command = line[8..colon];
                if (command is "config|resetstat")
                {
                    continue;
                }

                var fields = line[(colon + 1)..].Trim().Split(',').Select(f => f.Split('=')).Where(f => f.Length == 2).ToDictionary(f => f[0], f => f[1]);
                var calls = double.Parse(fields["calls"], CultureInfo.InvariantCulture);
                var usec = double.Parse(fields["usec"], CultureInfo.InvariantCulture);
                var (c, u) = totals.GetValueOrDefault(command);
                totals[command] = (c + calls, u + usec);
            }
        }

        foreach (var command in totals.Keys.ToList())
        {
            var (c, u) = totals[command];
            totals[command] = (c / elapsed.TotalSeconds / endpoints, u / elapsed.TotalSeconds / endpoints);
        }

        return totals;
    }

    private static void PrintServerCost(string who, SortedDictionary<string, (double Calls, double Microseconds)> perCommand)
    {
        var total = perCommand.Values.Sum(v => v.Microseconds);
        var calls = perCommand.Values.Sum(v => v.Calls);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"    what {who} costs each endpoint's server: {total:F1} µs/s in {calls:F2} calls/s; {string.Join(", ", perCommand.Where(p => p.Value.Calls > 0).OrderByDescending(p => p.Value.Microseconds).Select(p => string.Create(CultureInfo.InvariantCulture, $"{p.Key} {p.Value.Microseconds:F1} µs/s ({p.Value.Calls:F2}/s)")))}"));
    }

    /// <summary>
    /// The sidecar's <c>/metrics</c> and the floor's, a scrape of each in turn (<paramref name="pairs"/> pairs, the order
    /// swapped every pair, one curl keeping both connections alive), so that both meet the same machine at the same moment:
    /// timed in batches one after the other, the floor moved from 15 to 19.5 ms between two runs on the same build, and in
    /// rounds of five of each the rounds' ratios spread from 0.77 to 1.44 within one run (issue 52). Returns the sidecar's
    /// median and p95 and the floor's median; prints the ratio and how far the ratios of ten consecutive blocks spread.
    /// </summary>
    private static async Task<(double Median, double P95, double FloorMedian)> InterleavedAsync(Uri ours, PrometheusNetFloor.Running floor, int pairs)
    {
        var (mine, theirs) = await SidecarScale.TimedInPairsByCurlAsync(ours, floor.Metrics, pairs);
        const int Blocks = 10;
        var size = Math.Max(1, pairs / Blocks);
        var ratios = Enumerable.Range(0, Blocks).Where(b => b * size < pairs)
            .Select(b => Median(mine.Skip(b * size).Take(size)) / Median(theirs.Skip(b * size).Take(size))).Order().ToList();
        var (median, floorMedian) = (Median(mine), Median(theirs));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"    in turns with prometheus-net alone ({floor.Kind}, the same series {floor.Order}, {floor.Warmups} warm-up scrapes), {pairs} pairs: /metrics {median:F2} ms median against {floorMedian:F2}, "
            + $"{median / floorMedian:F2} times; {ratios.Count} blocks' ratios {ratios[0]:F2} to {ratios[^1]:F2}"));
        var sorted = mine.Order().ToList();
        return (median, sorted[(int)Math.Ceiling(sorted.Count * 0.95) - 1], floorMedian);
    }

    private static double Median(IEnumerable<double> values) => values.Order().ToList() is var sorted && sorted.Count > 0 ? sorted[sorted.Count / 2] : double.NaN;

    /// <summary>
    /// Scrapes as a scraper does (curl, one kept-alive connection, each timed by curl): the median and p95, after
    /// as many warm-ups; the body's size and series from the last warm-up.
    /// </summary>
    private static async Task<(double Median, double P95, long Bytes, int Series, string Text)> ScrapeAsync(HttpClient client, int scrapes)
    {
        var text = string.Empty;
        for (var i = 0; i < scrapes; i++)
        {
            text = await client.GetStringAsync(new Uri("/metrics", UriKind.Relative));
        }

        var times = await SidecarScale.TimedByCurlAsync(new Uri(client.BaseAddress!, "/metrics"), scrapes);
        return (times[times.Count / 2], times[(int)Math.Ceiling(times.Count * 0.95) - 1], System.Text.Encoding.UTF8.GetByteCount(text),
            text.Split('\n').Count(l => l.Length > 0 && l[0] != '#'), text);
    }

    /// <summary>The process's peak resident set, as the kernel keeps it (<c>VmHWM</c>).</summary>
    private static double PeakMegabytes(int pid)
    {
        var line = File.ReadLines($"/proc/{pid}/status").First(l => l.StartsWith("VmHWM:", StringComparison.Ordinal));
        return long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture) / 1024.0;
    }
}
