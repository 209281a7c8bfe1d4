using System.Globalization;
using MuxWatch.Testing;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The sidecar's memory against a hostile or broken server (issue 26, #5): the built service process
/// watching one <see cref="HostileRedis"/> that turns hostile after the handshake (a 10 MB INFO, a
/// million-field INFO, 5 MB error replies to every polled command, a LATENCY LATEST of 100 event names of
/// 1 MB each), probing and polling every 200 ms,
/// its resident set sampled every 50 ms for the run: peak and end, beside the same service watching a
/// quiet one. Asserts nothing.
/// </summary>
internal static class HostileMemory
{
    public static async Task<int> RunAsync(string[] args)
    {
        var seconds = HookOverhead.IntOption(args, "--seconds", 60);
        Console.WriteLine($"hostile-memory: the service process, one target, probe and poll every 200 ms, {seconds} s per shape, VmRSS sampled every 50 ms");
        Console.WriteLine($"  {"shape",-16} {"peak MB",8} {"end MB",8} {"polls refused",14} {"INFO read",10}");
        foreach (var shape in args.Contains("--shape") ? [args[Array.IndexOf(args, "--shape") + 1]] : (string[])["quiet", "info-10mb", "info-1m-fields", "errors-5mb", "latency-100x1mb"])
        {
            await MeasureAsync(shape, seconds, args);
        }

        return 0;
    }

    private static async Task MeasureAsync(string shape, int seconds, string[] args)
    {
        var hugeInfo = shape switch
        {
            "info-10mb" => HostileRedis.HugeInfo(10 * 1024 * 1024),
            "info-1m-fields" => HostileRedis.ManyFieldsInfo(1_000_000),
            _ => null,
        };
        var hugeError = shape == "errors-5mb" ? HostileRedis.Error("ERR " + new string('e', 5 * 1024 * 1024)) : null;

        // LATENCY LATEST is sent only while the latency monitor is on: this server says it is from the start.
        var hugeLatency = shape == "latency-100x1mb" ? LatencyLatest(100, 1024 * 1024) : null;
        var monitorOn = System.Text.Encoding.ASCII.GetBytes("*2\r\n$25\r\nlatency-monitor-threshold\r\n$3\r\n100\r\n");
        string[] polled = ["INFO", "CONFIG", "LATENCY", "SLOWLOG", "TIME"];
        var hostileNow = false;
        var infos = 0;
        await using var hostile = HostileRedis.Start(command =>
        {
            if (hugeLatency is not null && command is ["CONFIG", _, "latency-monitor-threshold"])
            {
                return monitorOn;
            }

            if (hugeLatency is not null && command is ["LATENCY", "LATEST"] && Volatile.Read(ref hostileNow))
            {
                return hugeLatency;
            }

            if (!Volatile.Read(ref hostileNow) || (command[0] == "CONFIG" && command[^1] == "databases"))
            {
                return null;
            }

            if (command[0] == "INFO")
            {
                Interlocked.Increment(ref infos);
                return hugeInfo ?? hugeError;
            }

            return hugeError is not null && polled.Contains(command[0]) ? hugeError : null;
        });
        // The service's heap cap alone (the benchmark's own process builds 100 MB replies and needs its memory).
        var heapLimit = args.Contains("--service-heap-limit") ? args[Array.IndexOf(args, "--service-heap-limit") + 1] : null;
        await using var service = await ServiceProcess.StartAsync(
            heapLimit is null ? new Dictionary<string, string>() : new Dictionary<string, string> { ["DOTNET_GCHeapHardLimit"] = heapLimit },
            "--MuxWatch:ProbeInterval=00:00:00.200", "--MuxWatch:PingInterval=00:00:00.200", "--MuxWatch:ServerPollInterval=00:00:00.200",
            "--MuxWatch:Targets:0:Name=hostile", $"--MuxWatch:Targets:0:ConnectionString={hostile.EndPoint}");
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(service.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds", ("endpoint", hostile.EndPoint)) > 0, "a first poll");
        Volatile.Write(ref hostileNow, true);

        var peak = 0.0;
        var end = DateTimeOffset.UtcNow.AddSeconds(seconds);
        while (DateTimeOffset.UtcNow < end)
        {
            peak = Math.Max(peak, SidecarScale.ResidentMegabytes(service.ProcessId));
            await Task.Delay(50);
        }

        var refused = (await MetricsText.ScrapeAsync(service.Client)).Value("muxwatch_server_poll_failures_total", ("endpoint", hostile.EndPoint), ("reason", "oversized")) ?? 0;
        var failures = string.Join(", ", (await MetricsText.ScrapeAsync(service.Client)).Samples("muxwatch_server_poll_failures_total", ("endpoint", hostile.EndPoint))
            .Where(s => s.Value > 0).Select(s => string.Create(CultureInfo.InvariantCulture, $"{s.Labels["reason"]} {s.Value:F0}")));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {shape,-16} {peak,8:F0} {SidecarScale.ResidentMegabytes(service.ProcessId),8:F0} {refused,14:F0} {Volatile.Read(ref infos),10}   poll failures: {failures}"));
    }

    /// <summary>A LATENCY LATEST reply of <paramref name="events"/> entries, each named with <paramref name="nameBytes"/> bytes.</summary>
    private static byte[] LatencyLatest(int events, int nameBytes)
    {
        var name = new string('n', nameBytes);
        var reply = new List<byte>(System.Text.Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture, $"*{events}\r\n")));
        for (var i = 0; i < events; i++)
        {
            reply.AddRange(System.Text.Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture, $"*4\r\n${nameBytes}\r\n")));
            reply.AddRange(System.Text.Encoding.ASCII.GetBytes(name));
            reply.AddRange(System.Text.Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture, $"\r\n:{DateTimeOffset.UtcNow.ToUnixTimeSeconds()}\r\n:10\r\n:10\r\n")));
        }

        return [.. reply];
    }
}
