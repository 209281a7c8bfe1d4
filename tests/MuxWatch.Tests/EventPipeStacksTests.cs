using MuxWatch.Sources;

namespace MuxWatch.Tests;

/// <summary>The EventPipe session MuxWatch opens on its own process, run on this test process: stacks named, the trace bounded.</summary>
public sealed class EventPipeStacksTests
{
    [Fact]
    public void A_trace_that_reaches_its_bound_stops_the_sampling_and_still_names_the_stacks()
    {
        // Ten seconds of sampling asked for, 64 KB allowed: the session stops as soon as the trace passes the bound,
        // and the rundown that follows still names every method of the stacks sampled until then.
        var (stacks, traceBytes, stoppedEarly) = EventPipeStacks.Sample(TimeSpan.FromSeconds(10), maxBytes: 64 * 1024);

        Assert.True(stoppedEarly);
        Assert.True(traceBytes > 64 * 1024, $"{traceBytes} bytes");
        Assert.Contains(stacks, stack => stack.Any(frame => frame.Method.StartsWith(
            "MuxWatch.Sources.EventPipeStacks.Record(", StringComparison.Ordinal) && frame.Module == "MuxWatch"));
    }

    [Fact]
    public void Its_temporary_files_are_gone_after_it()
    {
        var before = Directory.GetFiles(Path.GetTempPath(), $"muxwatch-stacks-{Environment.ProcessId}-*");

        _ = EventPipeStacks.Sample(TimeSpan.FromMilliseconds(100));

        Assert.Equal(before, Directory.GetFiles(Path.GetTempPath(), $"muxwatch-stacks-{Environment.ProcessId}-*"));
    }
}
