using System.Globalization;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The service under continuous load with a fault every few seconds: posts and listings without pause,
/// one server stalling every few seconds, another killed and restarted. After warm-up, the working
/// set, threads, file descriptors and series stay flat, and no task fails unobserved.
/// </summary>
/// <remarks>
/// One minute in the test command; <c>MUXWATCH_SOAK_SECONDS</c> makes it longer (600 or more by hand).
/// </remarks>
[Trait("Category", "Soak")]
[Collection(nameof(RunsAlone))]
public sealed class SoakTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Length = TimeSpan.FromSeconds(
        int.TryParse(Environment.GetEnvironmentVariable("MUXWATCH_SOAK_SECONDS"), CultureInfo.InvariantCulture, out var seconds) && seconds > 0 ? seconds : 60);

    [Fact]
    public async Task Under_load_and_faults_resources_stay_flat_after_warm_up()
    {
        await using var stalling = await RedisServer.StartAsync();
        await using var flapping = await RedisServer.StartAsync();
        await using var service = await ServiceProcess.StartAsync(
            "--MuxWatch:ProbeInterval=00:00:00.200", "--MuxWatch:PingInterval=00:00:00.200", "--MuxWatch:ServerPollInterval=00:00:00.500",
            "--Logging:LogLevel:Default=Warning", "--MuxWatch:TimeoutLogInterval=00:00:05",
            "--MuxWatch:Targets:0:Name=stalling", $"--MuxWatch:Targets:0:ConnectionString={stalling.EndPoint},asyncTimeout=300,syncTimeout=300",
            "--MuxWatch:Targets:1:Name=flapping", $"--MuxWatch:Targets:1:ConnectionString={flapping.EndPoint},connectTimeout=500");

        using var stop = new CancellationTokenSource(Length);
        var load = Task.Run(() => PostAndListAsync(service, stop.Token));
        var faults = Task.Run(() => InjectFaultsAsync(stalling, flapping, stop.Token));

        var started = Environment.TickCount64;
        var samples = new List<Sample>();
        while (!stop.IsCancellationRequested)
        {
            samples.Add(await SampleAsync(service, started));
            await Task.Delay(TimeSpan.FromSeconds(2), CancellationToken.None);
        }

        await Task.WhenAll(load, faults);
        var final = await SampleAsync(service, started);
        samples.Add(final);

        var warm = samples[samples.Count / 3];
        var after = samples.Skip(samples.Count / 3).ToList();
        output.WriteLine($"{Length.TotalSeconds:0} s, {samples.Count} samples; after warm-up (t={warm.Seconds:0} s): " +
            $"working set {warm.WorkingSetMb:0}..{after.Max(s => s.WorkingSetMb):0} MB, threads {warm.Threads}..{after.Max(s => s.Threads)}, " +
            $"fds {warm.FileDescriptors}..{after.Max(s => s.FileDescriptors)}, series {warm.Series}..{after.Max(s => s.Series)}, " +
            $"timeouts recorded {final.Recorded} (the probe's own: {samples[0].ProbeTimeouts} -> {warm.ProbeTimeouts} -> {final.ProbeTimeouts})");

        Assert.True(after.Max(s => s.WorkingSetMb) <= (warm.WorkingSetMb * 1.3) + 20, "the working set grew after warm-up");
        Assert.True(after.Max(s => s.Threads) <= warm.Threads + 15, "threads grew after warm-up");
        Assert.True(after.Max(s => s.FileDescriptors) <= warm.FileDescriptors + 30, "file descriptors grew after warm-up");
        Assert.True(after.Max(s => s.Series) <= warm.Series + 20, "series grew after warm-up");
        Assert.Equal(0, final.Unobserved);
        Assert.True(final.ProbeTimeouts > warm.ProbeTimeouts && warm.ProbeTimeouts > samples[0].ProbeTimeouts, "the stalls' timeouts were not caught throughout");
    }

    private static async Task PostAndListAsync(ServiceProcess service, CancellationToken stop)
    {
        var line = JsonSerializer.Serialize(new { message = "Timeout performing GET soak (5000ms), inst: 2, qu: 0, qs: 6, in: 0, serverEndpoint: 10.9.9.9:6379, WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 3.4.35" });
        var body = string.Concat(Enumerable.Repeat(line + "\n", 20));
        while (!stop.IsCancellationRequested)
        {
            try
            {
                using var posted = await service.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent(body, Encoding.UTF8, "application/x-ndjson"), stop);
                using var listed = await service.Client.GetAsync(new Uri("/api/timeouts?limit=200", UriKind.Relative), stop);
                await Task.Delay(10, stop); // about 1,500 timeouts a second: load, not a benchmark
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    private static async Task InjectFaultsAsync(RedisServer stalling, RedisServer flapping, CancellationToken stop)
    {
        for (var round = 0; !stop.IsCancellationRequested; round++)
        {
            try
            {
                await stalling.CommandAsync("DEBUG", "SLEEP", "1");
                if (round % 3 == 0)
                {
                    await flapping.KillAsync();
                    await Task.Delay(1500, stop);
                    await flapping.RestartAsync();
                }

                await Task.Delay(2000, stop);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    private static async Task<Sample> SampleAsync(ServiceProcess service, long started)
    {
        var status = await File.ReadAllLinesAsync($"/proc/{service.ProcessId}/status");
        long Field(string name) => long.Parse(status.First(l => l.StartsWith(name + ":", StringComparison.Ordinal)).Split(':')[1].Trim().Split(' ')[0], CultureInfo.InvariantCulture);
        var metrics = await MetricsText.ScrapeAsync(service.Client);
        using var api = JsonDocument.Parse(await service.Client.GetStringAsync(new Uri("/api/status", UriKind.Relative)));
        var root = api.RootElement;
        return new Sample(
            (Environment.TickCount64 - started) / 1000.0,
            Field("VmRSS") / 1024.0,
            (int)Field("Threads"),
            Directory.GetFiles($"/proc/{service.ProcessId}/fd").Length,
            metrics.Text.Split('\n').Count(l => l.Length > 0 && l[0] != '#'),
            root.GetProperty("totalRecorded").GetInt64(),
            root.GetProperty("process").GetProperty("unobservedTaskExceptions").GetInt64(),
            metrics.Samples("muxwatch_timeouts_total", ("multiplexer", "stalling")).Sum(sample => sample.Value));
    }

    private sealed record Sample(double Seconds, double WorkingSetMb, int Threads, int FileDescriptors, int Series, long Recorded, long Unobserved, double ProbeTimeouts);
}

/// <summary>The soak runs alone, after the parallel tests: its load would skew their timing, and theirs its figures.</summary>
[CollectionDefinition(nameof(RunsAlone), DisableParallelization = true)]
public sealed class RunsAlone;
