using System.Diagnostics;
using System.Text;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The service keeps its state in memory: working, it writes no file, so its container can run with a
/// read-only root file system (docker-compose.yml, deploy/kubernetes/), /tmp aside.
/// </summary>
[Trait("Category", "ServiceProcess")] // run once more on the container's native build by test.sh
[Collection(nameof(RunsAlone))] // PackageTests' pack publishes the tool into the app folder's publish/: never beside this snapshot
public sealed class DiskWriteTests
{
    [Fact]
    public async Task Working_it_writes_no_file_but_the_runtimes_own_in_tmp()
    {
        await using var redis = await RedisServer.StartAsync();
        var home = Directory.CreateTempSubdirectory("muxwatch-home-").FullName;
        var tmp = Directory.CreateTempSubdirectory("muxwatch-tmp-").FullName;
        var appFolder = Path.GetDirectoryName(BuiltProgram.PathOf("MuxWatch.Tool"))!;
        var before = Snapshot(appFolder);
        var port = FreePort.Next();
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{port}", "--MuxWatch:ProbeInterval=00:00:00.200", "--MuxWatch:PingInterval=00:00:00.200",
            "--MuxWatch:Targets:0:Name=cache", $"--MuxWatch:Targets:0:ConnectionString={redis.EndPoint},asyncTimeout=300");
        info.WorkingDirectory = home;
        info.Environment["HOME"] = home;
        info.Environment["TMPDIR"] = tmp;
        using var process = Process.Start(info)!;
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}") };
            await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(client)).Value("muxwatch_connected", ("multiplexer", "cache")) == 1, "the service probing its target");
            await redis.CommandAsync("DEBUG", "SLEEP", "2");
            using var posted = await client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent("Timeout performing GET k (5000ms), qu: 0, qs: 2, in: 0", Encoding.UTF8, "text/plain"));
            await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(client)).Value("muxwatch_timeouts_total", ("multiplexer", "cache")) >= 1, "the stall's timeout recorded");
            await client.GetStringAsync(new Uri("/api/timeouts", UriKind.Relative));
            await client.GetStringAsync(new Uri("/api/events", UriKind.Relative));
        }
        finally
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }

        Assert.Empty(Snapshot(home));
        Assert.Equal(before, Snapshot(appFolder));
        // Only the runtime's diagnostics and debugger pipes (dotnet-counters, dotnet-dump): a tmpfs /tmp serves them.
        Assert.All(Snapshot(tmp), file => Assert.True(
            Path.GetFileName(file).StartsWith("dotnet-diagnostic-", StringComparison.Ordinal) || Path.GetFileName(file).StartsWith("clr-debug-pipe-", StringComparison.Ordinal), file));
        Directory.Delete(home, recursive: true);
        Directory.Delete(tmp, recursive: true);
    }

    private static SortedSet<string> Snapshot(string folder) =>
        new(Directory.EnumerateFiles(folder, "*", SearchOption.AllDirectories).Select(f => $"{f}:{new FileInfo(f).Length}"), StringComparer.Ordinal);
}
