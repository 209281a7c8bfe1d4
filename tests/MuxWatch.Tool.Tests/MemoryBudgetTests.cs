using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// Issue 38, #1: outside a container the service had no memory budget (a hostile server's replies took it to
/// 1.96 GB). As `dotnet run` or the tool runs it (the JIT build) it caps its own GC heap at 256 MiB and says so at
/// start; <c>DOTNET_GCHeapHardLimit</c> sets another cap on either build (the native build, the image's, has no
/// cap of its own: the container's limit is its budget). Run on the JIT build and, by test.sh, on the native one.
/// </summary>
[Trait("Category", "ServiceProcess")]
public sealed class MemoryBudgetTests
{
    private static bool Native => Environment.GetEnvironmentVariable("MUXWATCH_SERVICE_EXECUTABLE") is not null;

    [Fact]
    public async Task The_service_says_its_budget_at_start_256_MiB_on_the_JIT_build()
    {
        await using var service = await ServiceProcess.StartAsync();

        var said = string.Empty;
        await Eventually.UntilAsync(() => (said = service.Output.Split('\n').FirstOrDefault(l => l.Contains("Memory budget: the GC heap may use ", StringComparison.Ordinal)) ?? string.Empty).Length > 0,
            "the budget in the start-up log");
        var mib = long.Parse(said[(said.IndexOf("may use ", StringComparison.Ordinal) + 8)..].Split(' ')[0], System.Globalization.CultureInfo.InvariantCulture);
        if (Native)
        {
            Assert.True(mib > 256, $"the native build bakes no cap: {said}");
        }
        else
        {
            Assert.Equal(256, mib);
        }
    }

    [Fact]
    public async Task Another_budget_is_taken_from_DOTNET_GCHeapHardLimit()
    {
        await using var service = await ServiceProcess.StartAsync(new Dictionary<string, string> { ["DOTNET_GCHeapHardLimit"] = "8000000" });

        await Eventually.UntilAsync(() => service.Output.Contains("Memory budget: the GC heap may use 128 MiB", StringComparison.Ordinal),
            "the configured budget in the start-up log");
    }
}
