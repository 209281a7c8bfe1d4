using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tests.Live;

/// <summary>
/// An app like a user's (its own process, its pool at the default minimum of this 2-core machine, its
/// multiplexer watched at the defaults) with 51 calls in flight while the real server sleeps in
/// <c>DEBUG SLEEP 2</c>, the slow log on. When they time out together their continuations pile onto the
/// small pool: that load is the stall's consequence, so every one of the app's timeouts must be
/// <c>slow-command</c>, settled, and counted once under it. Run on both ends of the client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class StallDiagnosisLiveTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task Every_timeout_of_a_stall_on_a_small_pool_is_the_slow_command_and_counted_once_under_it()
    {
        var run = await StallAsync();

        Assert.All(run.Timeouts, t => Assert.Equal("slow-command", t.GetProperty("cause").GetString()));
        Assert.All(run.Timeouts, t => Assert.StartsWith("slow-command: DEBUG ran 2", t.GetProperty("evidence")[0].GetString(), StringComparison.Ordinal));
        run.AssertCountedOnceUnder("slow-command");
    }

    [Fact]
    public async Task A_bgsave_forked_inside_the_wait_does_not_outrank_the_command_that_blocked_it()
    {
        var run = await StallAsync("bgsave");

        Assert.All(run.Timeouts, t =>
        {
            Assert.Equal("slow-command", t.GetProperty("cause").GetString());
            var persistence = t.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!).Where(e => e.StartsWith("persistence: ", StringComparison.Ordinal)).ToList();
            Assert.All(persistence, line => Assert.EndsWith("(contributing)", line, StringComparison.Ordinal));
        });
        Assert.Contains(run.Timeouts, t => t.GetProperty("evidence").EnumerateArray().Any(e => e.GetString()!.Contains("fork", StringComparison.Ordinal)));
        run.AssertCountedOnceUnder("slow-command");
    }

    private async Task<StallRun> StallAsync(params string[] variant)
    {
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["stall", _redis.EndPoint, .. variant]));
        Assert.True(exitCode == 0, $"the app's timeouts were not all recorded and settled (exit {exitCode}): {error}\n{output}");
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        var timeouts = lines.Where(line => line.StartsWith('{')).Select(line => JsonDocument.Parse(line).RootElement).ToList();
        var thrown = int.Parse(lines.Single(line => line.StartsWith("thrown: ", StringComparison.Ordinal))["thrown: ".Length..], System.Globalization.CultureInfo.InvariantCulture);
        var metrics = new MetricsText(string.Join('\n', lines.Where(line => line.StartsWith("metrics: ", StringComparison.Ordinal)).Select(line => line["metrics: ".Length..])));
        return new StallRun(timeouts, thrown, metrics);
    }

    private sealed record StallRun(List<JsonElement> Timeouts, int Thrown, MetricsText Metrics)
    {
        /// <summary>Every call that threw was recorded once, settled, and the counter holds each once under <paramref name="cause"/>.</summary>
        public void AssertCountedOnceUnder(string cause)
        {
            var apps = Timeouts.Where(t => t.GetProperty("source").GetString() == "first-chance").ToList();
            Assert.True(Thrown >= 40, $"only {Thrown} of the 51 calls timed out");
            Assert.Equal(Thrown, apps.Count);
            Assert.All(Timeouts, t => Assert.True(t.GetProperty("settled").GetBoolean()));
            var counted = Metrics.Value("muxwatch_timeouts_total", ("multiplexer", "app"), ("cause", cause), ("source", "first-chance"));
            Assert.Equal(Thrown, counted);
            var all = Metrics.Samples("muxwatch_timeouts_total").Where(s => s.Labels.GetValueOrDefault("multiplexer") == "app").Sum(s => s.Value);
            Assert.Equal(Timeouts.Count, all); // nothing counted under another cause, nothing twice
        }
    }
}
