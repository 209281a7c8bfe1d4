using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Tests;

/// <summary>One capture at a time, once per interval, never where it cannot work; and which capture speaks for which wait.</summary>
public sealed class PoolStackCapturesTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 27, 12, 0, 0, TimeSpan.Zero);

    [Fact]
    public void A_flood_of_requests_begins_one_capture_and_the_next_only_after_the_interval()
    {
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));

        var begun = Enumerable.Range(0, 1000).Count(i => captures.TryBegin(Start.AddMilliseconds(i)));
        Assert.Equal(1, begun);

        captures.Complete(Capture(Start));
        Assert.False(captures.TryBegin(Start.AddMinutes(4)));
        Assert.True(captures.TryBegin(Start.AddMinutes(5)));
    }

    [Fact]
    public void Where_a_capture_can_never_work_none_begins_again_and_the_reason_stands()
    {
        var captures = new PoolStackCaptures(TimeSpan.FromSeconds(1));
        Assert.True(captures.TryBegin(Start));

        captures.Never("the runtime's diagnostics socket could not be used");

        Assert.False(captures.TryBegin(Start.AddHours(1)));
        Assert.Equal("the runtime's diagnostics socket could not be used", captures.Unavailable);
        Assert.Null(captures.CapturingSince);
        Assert.False(new PoolStackCaptures(TimeSpan.FromSeconds(1), "it is turned off").TryBegin(Start));
    }

    [Fact]
    public void A_capture_that_failed_once_is_tried_again_and_its_reason_goes_with_the_next_success()
    {
        var captures = new PoolStackCaptures(TimeSpan.FromSeconds(1));
        Assert.True(captures.TryBegin(Start));
        captures.Fail("the last capture failed (IOException: disk full)");
        Assert.Equal("the last capture failed (IOException: disk full)", captures.LastFailure);

        Assert.True(captures.TryBegin(Start.AddSeconds(1)));
        captures.Complete(Capture(Start.AddSeconds(1)));
        Assert.Null(captures.LastFailure);
    }

    [Fact]
    public void A_capture_speaks_for_waits_from_a_minute_after_it_to_30_s_before_it_and_at_most_8_are_kept()
    {
        var captures = new PoolStackCaptures(TimeSpan.FromSeconds(1));
        for (var i = 0; i < 20; i++)
        {
            captures.Complete(Capture(Start.AddMinutes(i * 10)));
        }

        Assert.Equal(PoolStackCaptures.Capacity, captures.All.Count);
        var last = Start.AddMinutes(190);
        Assert.Equal(last, captures.For(last.AddSeconds(59), last.AddSeconds(60))?.At); // the wait began within the minute after
        Assert.Null(captures.For(last.AddSeconds(61), last.AddSeconds(62)));
        Assert.Equal(last, captures.For(last.AddSeconds(-40), last.AddSeconds(-30))?.At); // timed out 30 s before: the pool starved on
        Assert.Null(captures.For(last.AddSeconds(-40), last.AddSeconds(-31)));
    }

    [Fact]
    public void A_start_up_blip_spends_nothing_and_the_real_starvation_seconds_later_is_captured()
    {
        // Asked for by the runtime's word of blocking at start-up, the capture found 3 workers and none blocked: it used to
        // spend the 5 minutes, and the real starvation 20 s later was never captured.
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        Assert.True(captures.TryBegin(Start));
        var blip = new PoolStackCapture(Start, 400, "cooperative-blocking", 3, 0, 3, [new PoolThreadSite("Startup.Configure", null, 2)]);
        captures.Complete(blip);

        Assert.False(PoolStackCaptures.Spends(blip));
        Assert.False(captures.TryBegin(Start.AddSeconds(5))); // never two within the floor, whatever they found
        Assert.True(captures.TryBegin(Start.AddSeconds(20)));
    }

    [Fact]
    public void A_capture_that_found_the_starvation_spends_the_interval_until_the_pool_recovers()
    {
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        Assert.True(captures.TryBegin(Start));
        captures.Complete(Capture(Start));
        Assert.False(captures.TryBegin(Start.AddSeconds(30))); // the same episode: spent

        captures.PoolCalm(); // the pool recovered: the next starvation is another episode
        Assert.True(captures.TryBegin(Start.AddSeconds(40)));
    }

    [Fact]
    public void Captures_that_name_nobody_are_retried_three_times_in_an_episode_then_the_interval_is_spent()
    {
        // A starvation whose workers are all in a library's code: each capture names nobody. Without a bound it would be
        // captured every 10 s for as long as it lasts.
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        for (var i = 0; i < PoolStackCaptures.NamelessInARow; i++)
        {
            var at = Start.AddSeconds(10 * i);
            Assert.True(captures.TryBegin(at), $"capture {i + 1}");
            captures.Complete(new PoolStackCapture(at, 400, "starvation", 12, 0, 12, [new PoolThreadSite("Library.Spin", null, 1)]));
        }

        Assert.False(captures.TryBegin(Start.AddSeconds(10 * PoolStackCaptures.NamelessInARow)));
        Assert.False(captures.MayBeginBy(Start.AddMinutes(4)));

        captures.PoolCalm(); // recovered: another episode is captured again, and retried again
        Assert.True(captures.TryBegin(Start.AddMinutes(1)));
    }

    private static PoolStackCapture Capture(DateTimeOffset at) =>
        new(at, 400, "cooperative-blocking", 10, 10, 0, [new PoolThreadSite("CartService.LoadCart", "GetAwaiter().GetResult()", 10)]);
}
