using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>How starved a pool is, and how a starvation finding weighs against the pool before the wait.</summary>
internal static class Starvation
{
    /// <summary>
    /// Whether a pool is starved and how strongly: null when it is not; strong at ten or more busy over
    /// the minimum, or with every thread up to the minimum busy and 20 or more items queued (the pool adds
    /// a thread only about every 500 ms from there, so hundreds queued at the minimum is starvation at its
    /// start); weak for a few over the minimum with little queued.
    /// </summary>
    public static bool? Of(double busy, double min, double queued) =>
        busy - min >= Thresholds.StrongStarvationExcess || (busy >= min && queued >= Thresholds.StrongStarvationQueuedItems) ? true
        : busy > min ? false
        : null;

    /// <summary>True when the worker or I/O pool of <paramref name="pool"/> is starved at all.</summary>
    public static bool IsStarved(ThreadPoolSnapshot pool) =>
        Of(pool.WorkerBusy, pool.WorkerMin, pool.QueueLength) is not null || Of(pool.IoBusy, pool.IoMin, 0) is not null;

    /// <summary>
    /// Adds a starvation finding, weighed against the pool sampled just before the request started to
    /// wait: starvation that was not there then arose during the wait, which is what a stall does (the calls
    /// waiting on it time out together and their continuations queue), so it weighs as a sign a server
    /// stall also explains (clear, or weak when weak), never as overriding, unless MuxWatch's own connection
    /// shows the server answering through the wait (<see cref="Evidence.WeightIfNoStall"/>, read by <see cref="WitnessCorrelation"/>).
    /// </summary>
    public static void Add(Findings found, bool strong, ThreadPoolSnapshot? beforeWait, string line, params string[] fields) =>
        Add(found, strong, overriding: true, beforeWait, line, fields);

    /// <summary>
    /// As <see cref="Add(Findings, bool, ThreadPoolSnapshot?, string, string[])"/>; a strong finding that is not
    /// <paramref name="overriding"/> weighs as strong only: starvation just at its start (every thread up to the
    /// minimum busy, work queued) is conclusive beside nothing else, but does not explain away another cause's
    /// conclusive sign (a 40 MB reply beside a pool at its minimum, issue #2709, is read as the payload by the
    /// maintainers): the two then share the top, and the confidence says so.
    /// </summary>
    public static void Add(Findings found, bool strong, bool overriding, ThreadPoolSnapshot? beforeWait, string line, params string[] fields)
    {
        if (beforeWait is { } before && !IsStarved(before))
        {
            found.Add(Evidence.Finding(TimeoutCause.ThreadPoolStarvation, strong ? EvidenceWeight.Clear : EvidenceWeight.Weak,
                $"{line}; arose while the request waited (the pool's sample nearest the wait's start found WORKER Busy={before.WorkerBusy}/Min={before.WorkerMin} with {before.QueueLength} queued): load that appears because replies stopped may be a consequence, not the cause",
                fields) with { AroseDuringWait = true, WeightIfNoStall = WeightOf(strong, overriding) });
            return;
        }

        found.Add(TimeoutCause.ThreadPoolStarvation, WeightOf(strong, overriding),
            beforeWait is not null ? $"{line}; already so before the request started waiting (sampled by MuxWatch)" : line, fields);
    }

    private static EvidenceWeight WeightOf(bool strong, bool overriding) =>
        strong ? overriding ? EvidenceWeight.Overriding : EvidenceWeight.Strong : EvidenceWeight.Weak;
}
