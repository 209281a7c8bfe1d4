using System.Diagnostics;
using System.Globalization;
using System.Net;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// MuxWatch as a user takes it: the packages packed into a folder, the sample app (samples/MuxWatch.Sample,
/// copied out of the repository so none of its build settings apply) built against them by
/// PackageReference through its own nuget.config, on the newest client and on the 2.x floor, catching a
/// real stall's timeouts; and the tool installed from the folder explaining a real message.
/// </summary>
public sealed class PackageTests(PackedMuxWatch packed, ITestOutputHelper output) : IClassFixture<PackedMuxWatch>
{
    [Theory]
    [InlineData("3.4.35")]
    [InlineData("2.6.90")]
    public async Task The_sample_app_on_the_packages_serves_metrics_and_counts_every_timeout_of_a_real_stall(string redisVersion)
    {
        var app = await packed.BuildSampleAsync(redisVersion);
        await using var server = await RedisServer.StartAsync();
        var port = FreePort.Next();
        await using var running = ExternalProcess.Start("dotnet", Path.Combine(app, "MuxWatch.Sample.dll"),
            "--urls", $"http://127.0.0.1:{port}", "--Redis", $"{server.EndPoint},syncTimeout=500,asyncTimeout=500");
        using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };

        await Eventually.UntilAsync(async () =>
            (await client.GetAsync(new Uri("/cache/warm", UriKind.Relative))).IsSuccessStatusCode
            && (await MetricsText.ScrapeAsync(client)).Value("muxwatch_connected", ("multiplexer", "cache")) == 1,
            "the sample to answer and MuxWatch to see its multiplexer connected", TimeSpan.FromSeconds(60));

        // The stall, for real: the server sleeps while the app's requests wait past their 500 ms.
        var sleeping = server.CommandInBackground("DEBUG", "SLEEP", "3");
        var timedOut = 0;
        await Eventually.UntilAsync(async () =>
        {
            using var response = await client.GetAsync(new Uri("/cache/during-stall", UriKind.Relative));
            if (response.StatusCode == HttpStatusCode.ServiceUnavailable)
            {
                timedOut++;
            }

            return timedOut >= 2;
        }, "two of the app's requests to time out in the stall");
        await sleeping;

        // Every timeout the app saw is caught and, once settled, counted under the stall's cause.
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(client);
            return metrics.Samples("muxwatch_timeouts_total", ("multiplexer", "cache"), ("source", "first-chance")).Sum(s => s.Value) >= timedOut;
        }, $"the app's {timedOut} timeouts to be counted", TimeSpan.FromSeconds(60));
        var counted = (await MetricsText.ScrapeAsync(client)).Samples("muxwatch_timeouts_total", ("multiplexer", "cache"), ("source", "first-chance"))
            .Where(s => s.Value > 0).ToList();
        output.WriteLine($"StackExchange.Redis {redisVersion}: {timedOut} requests timed out; counted {string.Join(", ", counted.Select(s => $"{s.Labels["cause"]}={s.Value}"))}");
        Assert.All(counted, s => Assert.Contains(s.Labels["cause"], (string[])["server-stall", "slow-command"]));

        // The status page travels inside the package: its page and script are served from the packed assembly.
        var page = await client.GetStringAsync(new Uri("/muxwatch/", UriKind.Relative));
        Assert.Contains("data-api=\"/muxwatch\"", page, StringComparison.Ordinal);
        Assert.Contains("refresh()", await client.GetStringAsync(new Uri("/muxwatch/muxwatch.js", UriKind.Relative)), StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_tool_installs_from_the_folder_and_explains_a_real_message()
    {
        var tools = packed.Scratch("tools");
        var (installed, installOutput, installError) = await BuiltProgram.RunAsync(Dotnet("tool", "install", "MuxWatch.Tool",
            "--tool-path", tools, "--version", packed.Version, "--add-source", packed.Folder), timeout: TimeSpan.FromMinutes(3));
        Assert.True(installed == 0, installOutput + installError);
        var muxwatch = Path.Combine(tools, "muxwatch");

        // A real message: a real client's timeout while a real server sleeps, as its log would hold it.
        var message = await RealStallMessageAsync();
        var (explained, text, _) = await BuiltProgram.RunAsync(new ProcessStartInfo(muxwatch, ["explain"]) { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true }, message);
        var (help, helpText, _) = await BuiltProgram.RunAsync(new ProcessStartInfo(muxwatch, ["--help"]) { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true });
        var (misused, _, misuseError) = await BuiltProgram.RunAsync(new ProcessStartInfo(muxwatch, ["explain", "--no-such-option"]) { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true });

        Assert.Equal(0, explained);
        Assert.Contains("Cause:      server-stall", text, StringComparison.Ordinal);
        Assert.Equal(0, help);
        Assert.Contains("muxwatch explain", helpText, StringComparison.Ordinal);
        Assert.Contains("muxwatch serve", helpText, StringComparison.Ordinal);
        Assert.Equal(2, misused);
        Assert.Contains("--no-such-option", misuseError, StringComparison.Ordinal);
    }

    private static async Task<string> RealStallMessageAsync()
    {
        // The message carries this process's thread pool: roomy, as in an app that is not starved.
        TestThreadPool.EnsureRoomy();
        await using var server = await RedisServer.StartAsync();
        using var redis = await StackExchange.Redis.ConnectionMultiplexer.ConnectAsync($"{server.EndPoint},syncTimeout=500");
        var db = redis.GetDatabase();
        var sleeping = server.CommandInBackground("DEBUG", "SLEEP", "2");
        string? message = null;
        await Eventually.UntilAsync(() =>
        {
            try
            {
                db.StringGet("k");
                return false;
            }
            catch (StackExchange.Redis.RedisTimeoutException ex)
            {
                message = ex.ToString();
                return true;
            }
        }, "a GET to time out while the server sleeps");
        await sleeping;
        return message!;
    }

    private static ProcessStartInfo Dotnet(params string[] arguments)
    {
        var info = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        return info;
    }
}

/// <summary>
/// The packages of this build, packed once per test run into a scratch folder with a version of its own
/// (0.1.0-test.TICKS): NuGet caches a package by id and version, so a fixed version would let an old pack answer.
/// </summary>
public sealed class PackedMuxWatch : IAsyncLifetime
{
    private readonly string _root = Path.Combine(Path.GetTempPath(), "muxwatch-pack-" + Guid.NewGuid().ToString("N"));

    /// <summary>The folder the packages are in.</summary>
    public string Folder => Path.Combine(_root, "packages");

    /// <summary>The version they carry.</summary>
    public string Version { get; } = "0.1.0-test." + DateTime.UtcNow.Ticks.ToString(CultureInfo.InvariantCulture);

    /// <summary>A new folder under the scratch folder.</summary>
    public string Scratch(string name) => Directory.CreateDirectory(Path.Combine(_root, name)).FullName;

    public async Task InitializeAsync()
    {
        // The solution as built for this test run, packed without building again.
        var (exit, output, error) = await BuiltProgram.RunAsync(
            Start(BuiltProgram.RepositoryRoot, "pack", "MuxWatch.slnx", "-c", BuiltProgram.Configuration, "--no-build", "-o", Folder,
                $"-p:VersionPrefix=0.1.0", $"-p:VersionSuffix={Version["0.1.0-".Length..]}"),
            timeout: TimeSpan.FromMinutes(5));
        if (exit != 0)
        {
            throw new InvalidOperationException($"dotnet pack failed ({exit}):\n{output}\n{error}");
        }
    }

    /// <summary>Copies the sample out of the repository, points its nuget.config at the folder, builds it on <paramref name="redisVersion"/>; returns its output folder.</summary>
    public async Task<string> BuildSampleAsync(string redisVersion)
    {
        var source = Path.Combine(BuiltProgram.RepositoryRoot, "samples", "MuxWatch.Sample");
        var copy = Scratch("sample-" + redisVersion);
        foreach (var file in Directory.EnumerateFiles(source).Where(f => f.EndsWith(".cs", StringComparison.Ordinal) || f.EndsWith(".csproj", StringComparison.Ordinal)))
        {
            File.Copy(file, Path.Combine(copy, Path.GetFileName(file)));
        }

        var config = await File.ReadAllTextAsync(Path.Combine(source, "nuget.config"));
        await File.WriteAllTextAsync(Path.Combine(copy, "nuget.config"), config.Replace("../../artifacts/packages", Folder, StringComparison.Ordinal));
        var built = Path.Combine(copy, "out");
        var (exit, output, error) = await BuiltProgram.RunAsync(
            Start(copy, "build", "-c", "Release", "-o", built, $"-p:MuxWatchVersion={Version}", $"-p:RedisVersion={redisVersion}"),
            timeout: TimeSpan.FromMinutes(5));
        if (exit != 0)
        {
            throw new InvalidOperationException($"the sample did not build on StackExchange.Redis {redisVersion} ({exit}):\n{output}\n{error}");
        }

        return built;
    }

    public Task DisposeAsync()
    {
        try
        {
            Directory.Delete(_root, recursive: true);
        }
        catch (IOException)
        {
            // A scratch folder left in /tmp is harmless.
        }

        return Task.CompletedTask;
    }

    private static ProcessStartInfo Start(string workingDirectory, params string[] arguments)
    {
        var info = new ProcessStartInfo("dotnet") { WorkingDirectory = workingDirectory, RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        return info;
    }
}
