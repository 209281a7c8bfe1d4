using MuxWatch.State;

namespace MuxWatch.Tests;

/// <summary>
/// When the process counts as quiet (the witness's slower tick, the idle app's slower calm poll): on the counters a
/// test gives it, the pool's completed work items and the CPU time, over spans of a second.
/// </summary>
public sealed class ProcessActivityTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 29, 12, 0, 0, TimeSpan.Zero);
    private long _workItems;
    private double _cpuMs;
    private double _compilingMs;

    [Fact]
    public void Quiet_only_once_measured_busy_on_pool_work_or_cpu_and_quiet_again_five_seconds_after()
    {
        var activity = new ProcessActivity(() => (_workItems, _cpuMs));
        Assert.False(activity.IsQuiet(T0)); // nothing noted yet: not known to be quiet
        Assert.False(activity.NoteBusy(T0));
        Assert.False(activity.IsQuiet(T0.AddMilliseconds(500))); // less than a span measured

        // An idle app: a couple of work items and a fraction of a percent of a core a second.
        var at = T0;
        for (var second = 1; second <= 3; second++)
        {
            at = T0.AddSeconds(second);
            _workItems += 2;
            _cpuMs += 3;
            Assert.False(activity.NoteBusy(at));
        }

        Assert.True(activity.IsQuiet(at));

        // Ten work items in a second: busy, and for five seconds after.
        _workItems += 10;
        at = at.AddSeconds(1);
        Assert.True(activity.NoteBusy(at));
        Assert.False(activity.IsQuiet(at.AddSeconds(4.9)));
        Assert.True(activity.IsQuiet(at.AddSeconds(5)));

        // 2% of a core (20 ms of CPU in a second), no pool work: busy too.
        at = at.AddSeconds(5);
        Assert.False(activity.NoteBusy(at));
        _cpuMs += 20;
        at = at.AddSeconds(1);
        Assert.True(activity.NoteBusy(at));
        Assert.False(activity.IsQuiet(at));
    }

    [Fact]
    public void The_runtime_compiling_is_not_the_app_at_work()
    {
        // A freshly started idle app: 40 ms of CPU a second, nearly all of it the JIT compiling and recompiling.
        var activity = new ProcessActivity(() => (_workItems, _cpuMs, _compilingMs));
        var at = T0;
        activity.NoteBusy(at);
        for (var second = 1; second <= 3; second++)
        {
            at = T0.AddSeconds(second);
            _workItems += 2;
            _cpuMs += 40;
            _compilingMs += 37;
            Assert.False(activity.NoteBusy(at));
        }

        Assert.True(activity.IsQuiet(at));

        // The same CPU with only part of it compiling: the app at work.
        _cpuMs += 40;
        _compilingMs += 10;
        at = at.AddSeconds(1);
        Assert.True(activity.NoteBusy(at));
    }

    [Fact]
    public void A_pool_with_work_queued_is_busy_though_its_blocked_threads_complete_nothing()
    {
        var activity = new ProcessActivity(() => (_workItems, _cpuMs));
        var at = T0;
        activity.NoteBusy(at);
        at = at.AddSeconds(1);
        Assert.False(activity.NoteBusy(at));
        Assert.True(activity.IsQuiet(at));

        // No work item completed, no CPU: the pool's threads are all blocked, work waits in its queue.
        at = at.AddSeconds(0.1);
        Assert.True(activity.NoteBusy(at, poolCalm: false));
        Assert.False(activity.IsQuiet(at.AddSeconds(4.9)));
        Assert.True(activity.IsQuiet(at.AddSeconds(5)));
    }
}
