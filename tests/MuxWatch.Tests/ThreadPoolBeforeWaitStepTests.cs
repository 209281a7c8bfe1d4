using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.State;

namespace MuxWatch.Tests;

/// <summary>The pool as the wait began, read from the probe loop's samples: the one before the wait, else the first inside it.</summary>
public sealed class ThreadPoolBeforeWaitStepTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 29, 21, 24, 54, TimeSpan.Zero);

    // Seen in CI (3.4.35, a unix socket, the server stopped 3 s): the client dropped its connection and failed the 14 calls
    // waiting on it; their continuations queued on a 4-core pool at its minimum as the first of them was caught.
    private const string Disposed = "StackExchange.Redis.RedisConnectionException: ConnectionDisposed on Interactive#1@!/tmp/muxwatch-30aa5d1ae3fc40249a3bff9b5d920b33.sock (Idle), last: GET, origin: ReadFromPipe, outstanding: 14, last-read: 3s ago, last-write: 0s ago, keep-alive: 60s, state: ConnectedEstablished, mgr: 10 of 10 available, last-heartbeat: 0s ago, global: 0s ago, v: 3.4.35.20751";

    private static readonly ThreadPoolSnapshot AtCatch = new(4, 4, 32767, 0, 4, 1000, 4, 20, 900);
    private static readonly ThreadPoolSnapshot Calm = new(1, 4, 32767, 0, 4, 1000, 4, 0, 400);

    private static TimeoutContext Apply(ThreadPoolHistory history)
    {
        var report = TimeoutMessageReader.Read(Disposed);
        var timeout = new TimeoutContext(new TimeoutObservation(T0.AddSeconds(5), TimeoutSources.FirstChance, report) { ThreadPoolAtCatch = AtCatch }, final: true) { Report = report };
        new ThreadPoolBeforeWaitStep(history, Options.Create(new MuxWatchOptions())).Apply(timeout);
        new MessageRulesStep().Apply(timeout);
        return timeout;
    }

    [Fact]
    public void Started_during_the_wait_the_first_sample_inside_it_stands_for_the_pool_as_it_began()
    {
        // MuxWatch started 2 s into the 5 s taken for a connection failure: no sample before it. The first inside it found
        // the pool calm, so the queue at the catch arose during the wait (the failed calls' own continuations), a sign a
        // stall also explains, not the overriding starvation it used to be named over the witness's silence.
        var history = new ThreadPoolHistory();
        history.Add(T0.AddSeconds(2), Calm);
        history.Add(T0.AddSeconds(3), Calm);

        var timeout = Apply(history);

        Assert.Equal(Calm, timeout.ThreadPoolBeforeWait);
        Assert.Equal(EvidenceWeight.Clear, timeout.Diagnosis!.WeightOf(TimeoutCause.ThreadPoolStarvation));
        Assert.Contains(timeout.Diagnosis.EvidenceLines, line => line.Contains("arose while the request waited (the pool's sample nearest the wait's start found WORKER Busy=1/Min=4 with 0 queued)", StringComparison.Ordinal));
    }

    [Fact]
    public void A_sample_before_the_wait_is_read_first_and_none_at_all_leaves_the_catch_alone()
    {
        var before = new ThreadPoolHistory();
        before.Add(T0.AddSeconds(-0.5), AtCatch with { QueueLength = 300 });
        before.Add(T0.AddSeconds(2), Calm);
        Assert.Equal(300, Apply(before).ThreadPoolBeforeWait?.QueueLength);
        Assert.Equal(EvidenceWeight.Overriding, Apply(before).Diagnosis!.WeightOf(TimeoutCause.ThreadPoolStarvation));

        var none = Apply(new ThreadPoolHistory());
        Assert.Null(none.ThreadPoolBeforeWait);
        Assert.Equal(EvidenceWeight.Overriding, none.Diagnosis!.WeightOf(TimeoutCause.ThreadPoolStarvation));
    }
}
