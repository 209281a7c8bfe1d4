using MuxWatch.Testing;

namespace MuxWatch.Tests.Live;

/// <summary>
/// Where the pool's stack capture cannot work, an app like a user's blocking its pool on tasks: its starvation is
/// still named, and every timeout says why no code is. What is tested is MuxWatch's own capture, not the client,
/// so these run on the default client only (the capture itself is tested on both in AppSideDiagnosisLiveTests).
/// </summary>
[TakesMinutes]
public sealed class PoolStackCaptureUnavailableTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task With_the_runtimes_diagnostics_disabled_starvation_is_still_named_and_says_why_no_code_is()
    {
        // The same blocking app, started with DOTNET_EnableDiagnostics=0: no EventPipe session can be opened, so no
        // stacks; the runtime's events still arrive in-process, and every starvation timeout says why no code is named.
        var start = BuiltProgram.StartInfo("MuxWatch.TestApp", ["block", _redis.EndPoint]);
        start.Environment["DOTNET_EnableDiagnostics"] = "0";
        var (_, output, error) = await BuiltProgram.RunAsync(start);
        var run = StallRun.Parse(output);

        Assert.Equal("the runtime's diagnostics are disabled (DOTNET_EnableDiagnostics=0)", run.PoolStacks.GetProperty("unavailable").GetString());
        Assert.Empty(run.PoolStacks.GetProperty("captures").EnumerateArray());
        Assert.Equal(0, run.Metrics.Value("muxwatch_threadpool_stack_captures_total", ("outcome", "captured")));
        AssertEveryStarvationSaysWhyNoCode(run, "the runtime's diagnostics are disabled (DOTNET_EnableDiagnostics=0)", error + output);
    }

    [Fact]
    public async Task Where_the_diagnostic_socket_cannot_be_made_starvation_is_still_named_and_says_why_no_code_is()
    {
        // A container whose temporary folder is missing (a read-only root without /tmp): the runtime cannot make its
        // diagnostic socket there, so MuxWatch's session cannot connect. The capture fails once, says why, and is
        // never tried again; every starvation timeout says why.
        var start = BuiltProgram.StartInfo("MuxWatch.TestApp", ["block", _redis.EndPoint]);
        start.Environment["TMPDIR"] = "/nonexistent/muxwatch-tmp";
        var (_, output, error) = await BuiltProgram.RunAsync(start);
        var run = StallRun.Parse(output);

        var reason = run.PoolStacks.GetProperty("unavailable").GetString();
        Assert.StartsWith("the runtime's diagnostics socket could not be used (ServerNotAvailableException: ", reason, StringComparison.Ordinal);
        Assert.Contains("/nonexistent/muxwatch-tmp", reason, StringComparison.Ordinal);
        Assert.Equal(1, run.Metrics.Value("muxwatch_threadpool_stack_captures_total", ("outcome", "unavailable")));
        Assert.Equal(0, run.Metrics.Value("muxwatch_threadpool_stack_captures_total", ("outcome", "captured")));
        AssertEveryStarvationSaysWhyNoCode(run, reason!, error + output);
    }

    /// <summary>Every timeout of the blocking app (bar the connection failures of its end) is starvation and says why no code is named.</summary>
    private static void AssertEveryStarvationSaysWhyNoCode(StallRun run, string reason, string context)
    {
        // Every timeout the app threw. Beside them, when 3.x drops its connection under the starved pool, its
        // RedisConnectionExceptions (no fields to read) are called connection-loss, starvation the weaker cause: a known
        // gap of the diagnosis (issue 41's closing note), not this capture's.
        var starved = run.Timeouts.Where(t => t.GetProperty("exceptionType").GetString() == "StackExchange.Redis.RedisTimeoutException").ToList();
        Assert.True(starved.Count > 0, context);
        Assert.All(starved, t =>
        {
            Assert.Equal("thread-pool-starvation", t.GetProperty("cause").GetString());
            Assert.Contains($"no stacks of the pool's workers were captured: {reason}", StallRun.Lines(t));
        });
    }
}
