using System.Diagnostics;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>The sidecar's own process families (read from <c>/proc/self/status</c> on Linux) say what the runtime says of the process.</summary>
public sealed class ProcessMetricsTests
{
    [Fact]
    public async Task The_process_families_read_what_the_runtime_reports_for_this_process()
    {
        await using var sidecar = new InMemorySidecar(("MuxWatch:DiscoverMultiplexers", "false"));
        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        using var self = Process.GetCurrentProcess();

        // Read a moment apart, in a process that allocates meanwhile: the same figure within a factor of two.
        Assert.InRange(metrics.Value("process_working_set_bytes")!.Value, self.WorkingSet64 / 2.0, self.WorkingSet64 * 2.0);
        Assert.InRange(metrics.Value("process_private_memory_bytes")!.Value, self.PrivateMemorySize64 / 2.0, self.PrivateMemorySize64 * 2.0);
        Assert.InRange(metrics.Value("process_virtual_memory_bytes")!.Value, self.VirtualMemorySize64 / 2.0, self.VirtualMemorySize64 * 2.0);
        Assert.InRange(metrics.Value("process_num_threads")!.Value, Math.Max(1, self.Threads.Count / 2), self.Threads.Count * 2);
        Assert.True(metrics.Value("process_cpu_seconds_total") > 0);
    }
}
