namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// The figures the rules compare a message's fields with, each with where it comes from (docs/diagnosis.md
/// lists them beside the rules). Here, below the diagnoser, so that the rules read them without reaching up.
/// </summary>
internal static class Thresholds
{
    /// <summary>
    /// Outbound or inbound KiB (moved on the connection while the request waited) from which a payload
    /// counts as large. Typical replies are well under 1 KiB; a quarter of a MiB moving while a small
    /// request waits is head-of-line blocking (a public report with <c>inbound=277KiB, cur-in: 284577</c>
    /// and a healthy pool had no other explanation).
    /// </summary>
    public const double LargeTransferKiB = 256;

    /// <summary>Bytes of one reply (<c>last-in</c>, <c>cur-in</c>) or in a pipe from which it counts as large.</summary>
    public const double LargeReplyBytes = 256 * 1024;

    /// <summary>
    /// Bytes of the reply being read (<c>cur-in</c>) from which the blocking collections over the wait are that reply's own
    /// doing: both client generations read a reply whole before handing it over, copying it at least once, so a reply of
    /// tens of MB is as much allocated on the large-object heap in one read, which sets off blocking collections (a
    /// 137 MB <c>cur-in</c> on 2.6.90 came with 97 ms of pauses in 356 ms: <c>StallDiagnosisLiveTests</c>, huge value).
    /// </summary>
    public const double CollectingReplyBytes = 16 * 1024 * 1024;

    /// <summary>Bytes waiting in the socket (<c>in</c>) from which the socket buffer counts as full: a large reply is arriving.</summary>
    public const double FullSocketBytes = 48 * 1024;

    /// <summary>
    /// Bytes waiting in the socket from which, with the reader waiting on the socket (<c>rs: ReadAsync</c>)
    /// and nothing else outstanding, a sizable reply is still arriving (a maintainer's reading of
    /// <c>qs: 0, in: 22649</c> in issue #2066): a quarter of a 64 KiB socket buffer.
    /// </summary>
    public const double ArrivingReplyBytes = 16 * 1024;

    /// <summary>
    /// Busy threads over the pool's minimum from which starvation counts as strong evidence: the pool adds
    /// a thread about every half second above its minimum, so ten waiting for one is seconds of delay.
    /// Fewer over (Busy=8 against Min=1, Busy=11 against Min=2) is weak: maintainers look past it to a
    /// large reply or a short timeout (issues #2066, #1455).
    /// </summary>
    public const int StrongStarvationExcess = 10;

    /// <summary>
    /// Work items queued on the pool (<c>POOL QueuedItems</c>) from which starvation above the minimum
    /// counts as strong whatever the busy count: on a 2-core host Busy=4 against Min=2 with 300 items
    /// queued is a starved app (measured by the starvation live test).
    /// </summary>
    public const int StrongStarvationQueuedItems = 20;

    /// <summary>
    /// Work items queued at the minimum from which starvation also explains away another cause's conclusive sign
    /// (a lost connection, a stuck reader): hundreds queued is a starved app (the starvation live test queues 300
    /// on a minimum of 2), a few dozen beside a 40 MB reply is the reply holding the reader (issue #2709).
    /// </summary>
    public const int OverridingStarvationQueuedItems = 100;

    /// <summary>Worker threads busy from which the pool counts as exhausted whatever its minimum (ExhaustedPoolRule): "a hundred or so".</summary>
    public const int ExhaustedWorkerThreads = 100;

    /// <summary>Lifetime synchronous operations (<c>sync-ops</c>) from which an app counts as calling synchronously at all (not one start-up call).</summary>
    public const double SynchronousOnlyOperations = 1000;

    /// <summary>The share of synchronous calls (<c>sync-ops</c> of both) from which every call counts as synchronous (issue #2339: 128019 and 0).</summary>
    public const double SynchronousOnlyShare = 0.99;

    /// <summary>
    /// Bytes of one reply (<c>cur-in</c>, <c>last-in</c>) from which its size alone shows the wait went on moving it:
    /// 64 MiB is half a second on a gigabit link. A smaller reply is milliseconds on a LAN, so its size alone is clear
    /// evidence, strong only beside bytes moved while the request waited (<c>inbound</c>, <c>outbound</c>) or a full
    /// socket: a 2.2 MB <c>cur-in</c> alone beside a pool loaded by synchronous callers was the pool (issue #2339).
    /// </summary>
    public const double SecondsLongReplyBytes = 64 * 1024 * 1024;

    /// <summary>A pool minimum from which it counts as raised by the app (the default is the core count).</summary>
    public const int RaisedMinimumThreads = 100;

    /// <summary>Worker threads busy below a raised minimum from which the app's machine counts as loaded.</summary>
    public const int LoadedWorkerThreads = 20;

    /// <summary>The client machine's CPU (<c>Local-CPU</c>, 1.x and 2.x) from which it counts as saturated.</summary>
    public const double SaturatedCpuPercent = 90;

    /// <summary>The client machine's CPU from which it counts as contributing.</summary>
    public const double BusyCpuPercent = 75;

    /// <summary>
    /// How late past its timeout (beyond twice the timeout) an async timeout must be noticed to count as
    /// stuck: the client checks on a one-second heartbeat, so up to about a second late is normal.
    /// </summary>
    public const double LateCheckMilliseconds = 2000;

    /// <summary>
    /// The share of the wait that GC pauses must have taken to explain a timeout on their own (as a server
    /// event must: <c>TimelineCorrelation.ExplainingShare</c>); from half of it they also explain a stuck pool.
    /// </summary>
    public const double ExplainingGcPauseShare = 0.25;

    /// <summary>The share of the wait from which GC pauses count at all (weak): a tenth of it.</summary>
    public const double ContributingGcPauseShare = 0.1;

    /// <summary>The share of its cores the process must have used over the wait to count as short of CPU.</summary>
    public const double SaturatedProcessCpuShare = 0.9;

    /// <summary>The share of the wait MuxWatch's sleeping thread must have lost waiting for a CPU to count as the process short of it.</summary>
    public const double LateWakeShare = 0.25;

    /// <summary>Bytes waiting in the socket (<c>in</c>) from which a backlog of unread replies is clear, not incidental.</summary>
    public const double ClearInputBytes = 1024;
}
