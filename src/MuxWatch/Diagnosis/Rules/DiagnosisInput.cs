using MuxWatch.Model;
using MuxWatch.Reading;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>What the rules read: the message, the generation that wrote it, and what MuxWatch sampled in-process.</summary>
/// <param name="Report">What the message said.</param>
/// <param name="Generation">The client generation that wrote it.</param>
/// <param name="SampledThreadPool">The pool sampled when the exception was thrown (in-process only).</param>
/// <param name="Live">The endpoint's live counters over the wait (in-process only).</param>
/// <param name="PoolBeforeWait">The pool sampled just before the request started waiting (in-process only).</param>
/// <param name="Runtime">What this process's runtime did over the wait: GC pauses, CPU (in-process only).</param>
internal sealed record DiagnosisInput(
    RedisErrorReport Report,
    ClientGeneration Generation,
    ThreadPoolSnapshot? SampledThreadPool,
    LiveCounters? Live,
    ThreadPoolSnapshot? PoolBeforeWait,
    RuntimeOverWait? Runtime = null)
{
    /// <summary>True when the message's WORKER or IOCP pool has more busy threads than its minimum.</summary>
    public bool PoolAboveMinimum =>
        ((string[])["WORKER", "IOCP"]).Any(pool => Report.Field(pool)?.Part("Busy") > Report.Field(pool)?.Part("Min"));
}
