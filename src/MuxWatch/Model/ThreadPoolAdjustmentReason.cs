namespace MuxWatch.Model;

/// <summary>
/// Why the runtime's thread pool changed its thread count: the <c>Reason</c> of its
/// <c>ThreadPoolWorkerThreadAdjustmentAdjustment</c> event, in the runtime's own numbering.
/// </summary>
internal enum ThreadPoolAdjustmentReason
{
    /// <summary>The hill climbing's warm-up.</summary>
    Warmup = 0,

    /// <summary>The hill climbing starting.</summary>
    Initializing = 1,

    /// <summary>A random move of the hill climbing.</summary>
    RandomMove = 2,

    /// <summary>The hill climbing following throughput.</summary>
    ClimbingMove = 3,

    /// <summary>The hill climbing saw the throughput change.</summary>
    ChangePoint = 4,

    /// <summary>The hill climbing settling.</summary>
    Stabilizing = 5,

    /// <summary>Queued work made no progress: threads added because the pool was starved.</summary>
    Starvation = 6,

    /// <summary>A thread waited for work past its timeout and left.</summary>
    ThreadTimedOut = 7,

    /// <summary>Pool threads blocked waiting on tasks (sync over async): threads added to make up for them.</summary>
    CooperativeBlocking = 8,
}
