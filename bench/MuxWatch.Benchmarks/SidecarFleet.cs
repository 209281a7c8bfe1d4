using System.Diagnostics;
using System.Globalization;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The sidecar watching a fleet of separate endpoints, as a user means "500 endpoints": each redis-server
/// listens on several loopback addresses (127.0.0.1 to 127.0.0.N), and every address is a target of its own, so
/// the sidecar holds one multiplexer, one polling connection and one witness per endpoint, as it would for 500
/// servers. Measured while nothing is wrong: the sidecar's CPU (ms a second) and resident set (median and peak),
/// its <c>/metrics</c> (median and p95 over scrapes on one kept-alive connection), and what watching costs each
/// server, from the server's own <c>INFO commandstats</c> (µs a second spent on MuxWatch's commands, by command,
/// per endpoint) beside <c>prometheus-redis-exporter</c> scraping every endpoint at a 15 s interval. Prints
/// figures; asserts nothing.
/// </summary>
internal static class SidecarFleet
{
    private const string Exporter = "/usr/bin/prometheus-redis-exporter";

    public static async Task<int> RunAsync(string[] args)
    {
        var serverCount = HookOverhead.IntOption(args, "--servers", 50);
        var addresses = Math.Clamp(HookOverhead.IntOption(args, "--addresses", 10), 1, 250);
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
        var endpointCount = serverCount * addresses;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"sidecar-fleet{(settings.Count > 0 ? $" ({string.Join(", ", settings)})" : "")}: {endpointCount} separate endpoints ({serverCount} redis-servers x {addresses} loopback addresses, {keys:N0} keys each), warm-up {warmup.TotalSeconds:0} s, window {window.TotalSeconds:0} s, {scrapes} scrapes, {Environment.ProcessorCount} cores, service {BuiltProgram.StartInfo("MuxWatch.Service").FileName}"));

        var bind = new List<string> { "--bind" };
        bind.AddRange(Enumerable.Range(1, addresses).Select(a => $"127.0.0.{a}"));
        var servers = new List<RedisServer>();
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

            var endpoints = servers.SelectMany(s => Enumerable.Range(1, addresses).Select(a => $"127.0.0.{a}:{s.Port}")).ToList();
            await MeasureSidecarAsync(endpoints, servers, admin, settings, warmup, window, scrapes);
            if (!skipExporter)
            {
                await MeasureExporterAsync(endpoints, servers, admin, window);
            }
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

    private static async Task MeasureSidecarAsync(List<string> endpoints, List<RedisServer> servers, ConnectionMultiplexer admin, List<string> settings, TimeSpan warmup, TimeSpan window, int scrapes)
    {
        var port = FreePort.Next();
        var info = BuiltProgram.StartInfo("MuxWatch.Service", ["--urls", $"http://127.0.0.1:{port}", .. settings.Where(s => !s.StartsWith("env:", StringComparison.Ordinal)).Select(s => "--" + s)]);
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
                $"  connected {endpoints.Count} targets in {started.Elapsed.TotalSeconds:F1} s; resident {SidecarScale.ResidentMegabytes(process.Id):F0} MB, peak so far {PeakMegabytes(process.Id):F0} MB"));
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

            var (median, p95, bytes, series) = await ScrapeAsync(client, scrapes);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  MuxWatch sidecar: CPU {cpuMsPerSecond:F1} ms/s ({cpuMsPerSecond * 1000 / endpoints.Count:F0} µs/s an endpoint); resident {resident[resident.Count / 2]:F0} MB median, {PeakMegabytes(process.Id):F0} MB peak; /metrics {median:F2} ms median, {p95:F2} ms p95, {bytes / 1024.0:F0} KB, {series:N0} series ({(double)series / endpoints.Count:F1} an endpoint)"));
            PrintServerCost("MuxWatch", perCommand);
        }
        finally
        {
            await SidecarScale.StopAsync(process);
        }
    }

    /// <summary>redis_exporter scraping every endpoint every 15 s for the window, as Prometheus would with one target per endpoint.</summary>
    private static async Task MeasureExporterAsync(List<string> endpoints, List<RedisServer> servers, ConnectionMultiplexer admin, TimeSpan window)
    {
        if (!File.Exists(Exporter))
        {
            Console.WriteLine($"  redis_exporter: {Exporter} is not installed (apt-get install prometheus-redis-exporter); left out");
            return;
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
    /// Scrapes as a scraper does (curl, one kept-alive connection, each timed by curl): the median and p95, after
    /// as many warm-ups; the body's size and series from the last warm-up.
    /// </summary>
    private static async Task<(double Median, double P95, long Bytes, int Series)> ScrapeAsync(HttpClient client, int scrapes)
    {
        var text = string.Empty;
        for (var i = 0; i < scrapes; i++)
        {
            text = await client.GetStringAsync(new Uri("/metrics", UriKind.Relative));
        }

        var times = await SidecarScale.TimedByCurlAsync(new Uri(client.BaseAddress!, "/metrics"), scrapes);
        return (times[times.Count / 2], times[(int)Math.Ceiling(times.Count * 0.95) - 1], System.Text.Encoding.UTF8.GetByteCount(text),
            text.Split('\n').Count(l => l.Length > 0 && l[0] != '#'));
    }

    /// <summary>The process's peak resident set, as the kernel keeps it (<c>VmHWM</c>).</summary>
    private static double PeakMegabytes(int pid)
    {
        var line = File.ReadLines($"/proc/{pid}/status").First(l => l.StartsWith("VmHWM:", StringComparison.Ordinal));
        return long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture) / 1024.0;
    }
}
