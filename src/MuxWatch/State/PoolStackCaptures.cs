using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// The thread pool's stack captures: the last few, the one under way, and why none can be taken when that is so.
/// At most one capture runs at a time. A capture that found the starvation (<see cref="Spends"/>: it names a culprit, a
/// site holding a share of the blocked workers, or of the busy ones) spends the budget: the next starts only
/// <c>MuxWatch:PoolStackCaptureInterval</c> later, or once the pool has recovered (<see cref="PoolCalm"/>), so that a
/// starving app is captured once per episode, not once per timeout. One that named nobody (a start-up blip, or a
/// starvation caught before the app's code filled the pool) spends nothing, and the next starvation is captured after
/// <see cref="Floor"/>: many apps starve right after a start, under the first traffic; <see cref="NamelessInARow"/> of
/// them in one episode spend it all the same.
/// </summary>
internal sealed class PoolStackCaptures(TimeSpan minInterval, string? unavailable = null)
{
    /// <summary>Captures kept, at most; the oldest goes first.</summary>
    internal const int Capacity = 8;

    /// <summary>How far before a request's wait a capture still speaks for it: the same starvation, still going.</summary>
    internal static readonly TimeSpan ReachBack = TimeSpan.FromMinutes(1);

    /// <summary>How far after a request timed out a capture still speaks for it: taken as the pool starved on.</summary>
    internal static readonly TimeSpan ReachForward = TimeSpan.FromSeconds(30);

    /// <summary>The least time between two captures, whatever they found (a blip's is spent on nothing, and costs a capture).</summary>
    internal static readonly TimeSpan Floor = TimeSpan.FromSeconds(10);

    /// <summary>The least share of the blocked (or busy) workers a site must hold to be named: a tenth, and two threads.</summary>
    internal const double CulpritShare = 0.1;

    /// <summary>
    /// Captures in a row that named nobody after which the interval is spent all the same: a starvation whose workers are
    /// never in the app's own code (all in a library's, or the framework's) would otherwise be captured every
    /// <see cref="Floor"/> for as long as it lasts.
    /// </summary>
    internal const int NamelessInARow = 3;

    private readonly Lock _gate = new();
    private readonly List<PoolStackCapture> _captures = [];
    private DateTimeOffset? _lastBegun;
    private DateTimeOffset? _lastSpent;
    private bool _rearmed;
    private int _nameless;

    /// <summary>When the capture under way began; null when none is.</summary>
    public DateTimeOffset? CapturingSince { get; private set; }

    /// <summary>Why no capture can be taken in this process (diagnostics disabled, Native AOT, no permission); null when one can.</summary>
    public string? Unavailable { get; private set; } = unavailable;

    /// <summary>Why the last capture failed, when it did and none succeeded since (the next starvation tries again); null otherwise.</summary>
    public string? LastFailure { get; private set; }

    /// <summary>The last captures, oldest first.</summary>
    public IReadOnlyList<PoolStackCapture> All
    {
        get
        {
            lock (_gate)
            {
                return [.. _captures];
            }
        }
    }

    /// <summary>Begins a capture at <paramref name="now"/> when none is under way, one can be taken, and the last began long enough ago.</summary>
    public bool TryBegin(DateTimeOffset now)
    {
        lock (_gate)
        {
            if (!MayBegin(now))
            {
                return false;
            }

            CapturingSince = now;
            _lastBegun = now;
            return true;
        }
    }

    /// <summary>
    /// True when <paramref name="site"/> holds enough of <paramref name="of"/> workers to be named: two threads at least,
    /// and a tenth of them. The one rule for who is named, by the diagnosis and by the budget alike: one thread of a host's,
    /// a test runner's or a library's own long wait beside the app's code is never a culprit.
    /// </summary>
    internal static bool IsCulprit(PoolThreadSite site, int of) => site.Threads >= 2 && site.Threads >= CulpritShare * of;

    /// <summary>The sites of <paramref name="capture"/> named as blocking the pool, most threads first.</summary>
    internal static List<PoolThreadSite> BlockedCulprits(PoolStackCapture capture) =>
        [.. capture.Sites.Where(site => site.Blocked && IsCulprit(site, capture.BlockedWorkers))];

    /// <summary>The sites of <paramref name="capture"/> named as keeping the pool busy (running, not blocked), most threads first.</summary>
    internal static List<PoolThreadSite> BusyCulprits(PoolStackCapture capture) =>
        [.. capture.Sites.Where(site => !site.Blocked && IsCulprit(site, capture.BusyWorkers))];

    /// <summary>
    /// True when <paramref name="capture"/> found the starvation it was asked for, and so spends the interval: it names a
    /// site that blocks the pool, or (asked for anything but the runtime's word of blocking) one that keeps it busy. A
    /// capture that names nobody was a blip (the start-up's first requests) or came before the app's code filled the
    /// pool (seen live: a pool kept busy by computing, captured while the computing held one thread of a dozen, spent the
    /// five minutes, and every timeout of the real starvation seconds later was left without its culprit).
    /// </summary>
    public static bool Spends(PoolStackCapture capture)
    {
        ArgumentNullException.ThrowIfNull(capture);
        return BlockedCulprits(capture).Count > 0 || capture.Trigger != "cooperative-blocking" && BusyCulprits(capture).Count > 0;
    }

    /// <summary>
    /// True when a capture may begin at or before <paramref name="time"/>: none is under way, one can be taken, and
    /// neither the floor nor a spent interval keeps it off until later. A starvation timeout left without a culprit is held
    /// open while one may still come for it.
    /// </summary>
    public bool MayBeginBy(DateTimeOffset time)
    {
        lock (_gate)
        {
            return MayBegin(time);
        }
    }

    /// <summary>The one test of whether a capture may begin at <paramref name="time"/>; called under the lock.</summary>
    private bool MayBegin(DateTimeOffset time) =>
        CapturingSince is null && Unavailable is null
        && !(_lastBegun is { } last && time - last < (minInterval < Floor ? minInterval : Floor))
        && !(_lastSpent is { } spent && time - spent < minInterval && !_rearmed);

    /// <summary>The pool has been calm a while (no work queued, no more busy threads than its minimum): the next starvation is another episode, captured again.</summary>
    public void PoolCalm()
    {
        lock (_gate)
        {
            _rearmed = _lastSpent is not null;
            _nameless = 0;
        }
    }

    /// <summary>Keeps a finished capture.</summary>
    public void Complete(PoolStackCapture capture)
    {
        lock (_gate)
        {
            var nameless = Spends(capture) ? 0 : _nameless + 1;
            if (nameless is 0 or >= NamelessInARow)
            {
                _lastSpent = capture.At;
                _rearmed = false;
                nameless = 0;
            }

            _nameless = nameless;

            _captures.Add(capture);
            if (_captures.Count > Capacity)
            {
                _captures.RemoveAt(0);
            }

            CapturingSince = null;
            LastFailure = null;
        }
    }

    /// <summary>Ends a capture that can never work in this process, saying why.</summary>
    public void Never(string reason)
    {
        lock (_gate)
        {
            CapturingSince = null;
            Unavailable ??= reason;
        }
    }

    /// <summary>Ends a capture that failed this once (the next starvation tries again), saying why.</summary>
    public void Fail(string reason)
    {
        lock (_gate)
        {
            CapturingSince = null;
            LastFailure = reason;
        }
    }

    /// <summary>The newest capture that speaks for a request that waited from <paramref name="from"/> to <paramref name="to"/>; null when none does.</summary>
    public PoolStackCapture? For(DateTimeOffset from, DateTimeOffset to)
    {
        lock (_gate)
        {
            return _captures.LastOrDefault(c => c.At >= from - ReachBack && c.At <= to + ReachForward);
        }
    }

    /// <summary>True when a capture under way began early enough to speak for a request that timed out at <paramref name="to"/>.</summary>
    public bool CapturingFor(DateTimeOffset to)
    {
        lock (_gate)
        {
            return CapturingSince is { } since && since <= to + ReachForward;
        }
    }
}
