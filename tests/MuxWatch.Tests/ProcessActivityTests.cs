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
}
