using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// A storm of timeouts in an app (a child process, so the counts are its own): every one is either
/// recorded or counted as dropped, none is lost unaccounted, and what is kept stays bounded.
/// </summary>
public sealed class CaptureStormTests
{
    [Fact]
    public async Task Every_timeout_of_a_storm_is_recorded_or_counted_as_dropped()
    {
        const int count = 20_000;

        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", "storm", $"{count}"));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}");
        using var summary = JsonDocument.Parse(output);
        var root = summary.RootElement;
        Assert.Equal(count, root.GetProperty("thrown").GetInt32());
        Assert.Equal(count, root.GetProperty("recorded").GetInt64() + root.GetProperty("dropped").GetInt64());
        Assert.Equal(root.GetProperty("recorded").GetInt64(), root.GetProperty("serverStall").GetInt64());
        Assert.Equal(100, root.GetProperty("kept").GetInt32());
    }
}
