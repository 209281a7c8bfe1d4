using MuxWatch.Reading;
using MuxWatch.Sources;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// The EventPipe session MuxWatch opens on its own process, run on this test process: stacks named, the trace
/// bounded, deep and many threads summed, no file left.
/// </summary>
public sealed class EventPipeStacksTests
{
    [Fact]
    public void A_trace_that_reaches_its_bound_stops_the_sampling_and_still_names_the_stacks()
    {
        // Ten seconds of sampling asked for, 64 KB allowed: the session stops as soon as the trace passes the bound,
        // and the rundown that follows still names every method of the stacks sampled until then.
        var (stacks, traceBytes, stoppedEarly, eventsLost) = EventPipeStacks.Sample(TimeSpan.FromSeconds(10), maxBytes: 64 * 1024);

        Assert.True(stoppedEarly);
        Assert.True(traceBytes > 64 * 1024, $"{traceBytes} bytes");
        Assert.Equal(0, eventsLost);
        Assert.Contains(stacks, stack => stack.Any(frame => frame.Method.StartsWith(
            "MuxWatch.Sources.EventPipeStacks.Record(", StringComparison.Ordinal) && frame.Module == "MuxWatch"));
    }

    [Theory]
    [InlineData(60)]
    [InlineData(200)]
    [InlineData(3000)]
    public void A_pool_worker_blocked_deep_in_a_recursion_is_summed_at_its_own_method(int depth)
    {
        // The runtime samples at most 100 frames of a stack, the innermost (measured: a 3,000-deep recursion gives
        // 100). 60 deep, the pool's loop is among them: the worker is summed at its own method. 200 or 3,000 deep, the
        // loop is not: the thread is told for the pool's by its name (it used to be left out: "1 worker, 0 blocked").
        using var release = new ManualResetEventSlim();
        using var blocked = new CountdownEvent(1);
        ThreadPool.UnsafeQueueUserWorkItem(_ => DeepRecursion.Block(depth, blocked, release), null);
        blocked.Wait(TimeSpan.FromSeconds(30));
        try
        {
            var (stacks, _, _, _) = EventPipeStacks.Sample(TimeSpan.FromMilliseconds(250));

            Assert.All(stacks, stack => Assert.True(stack.Count <= PoolStackReader.MaxFrames));
            var (_, _, _, sites) = PoolStackReader.Read(stacks);
            Assert.Contains(sites, site => site is { Method: "DeepRecursion.Block", BlockedVia: "ManualResetEventSlim.Wait" });
        }
        finally
        {
            release.Set();
        }
    }

    [Fact]
    public void Two_thousand_threads_are_sampled_within_the_bound()
    {
        using var release = new ManualResetEventSlim();
        var threads = Enumerable.Range(0, 2000).Select(_ => new Thread(() => release.Wait()) { IsBackground = true }).ToList();
        threads.ForEach(thread => thread.Start());
        try
        {
            var (stacks, traceBytes, _, _) = EventPipeStacks.Sample(TimeSpan.FromMilliseconds(250));

            Assert.True(stacks.Count >= 2000, $"{stacks.Count} threads sampled");
            Assert.True(traceBytes < EventPipeStacks.MaxSampleBytes + (EventPipeStacks.BufferMegabytes * 1024L * 1024), $"{traceBytes} bytes");
        }
        finally
        {
            release.Set();
            threads.ForEach(thread => thread.Join());
        }
    }

    [Fact]
    public async Task Its_temporary_files_are_gone_after_it()
    {
        var before = Directory.GetFiles(Path.GetTempPath(), $"muxwatch-stacks-{Environment.ProcessId}-*");

        _ = EventPipeStacks.Sample(TimeSpan.FromMilliseconds(100));

        // Other tests in this process capture too, their files coming and going meanwhile (seen in a full run: two of
        // theirs listed before, gone after): none may stay behind once the captures under way are over.
        await Eventually.UntilAsync(() => !Directory.GetFiles(Path.GetTempPath(), $"muxwatch-stacks-{Environment.ProcessId}-*").Except(before).Any(),
            "no temporary file of a capture left behind");
    }
}
