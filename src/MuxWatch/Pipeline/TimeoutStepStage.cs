namespace MuxWatch.Pipeline;

/// <summary>The order of the pipeline's steps.</summary>
public enum TimeoutStepStage
{
    /// <summary>Reads the message (the pipeline's own first step).</summary>
    Read = 0,

    /// <summary>Adds facts: the multiplexer it belongs to, its live counters.</summary>
    Enrich = 100,

    /// <summary>Names the cause from the message and the facts added (the rules of docs/diagnosis.md).</summary>
    Diagnose = 200,

    /// <summary>Refines the cause with what else was happening (the server's timeline); run again while the timeout is unsettled.</summary>
    Correlate = 300,
}
