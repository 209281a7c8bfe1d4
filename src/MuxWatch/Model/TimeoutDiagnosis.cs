namespace MuxWatch.Model;

/// <summary>Why one timeout happened: the primary cause, the others present, the evidence and what to do.</summary>
/// <param name="Cause">The primary cause: the first rule, in the documented order, whose evidence is present.</param>
/// <param name="Causes">Every cause whose evidence is present, primary first.</param>
/// <param name="Evidence">What decided each cause (primary first), why the primary won, and notes on the reading.</param>
/// <param name="Advice">One line on what to do about the primary cause.</param>
public sealed record TimeoutDiagnosis(
    TimeoutCause Cause,
    IReadOnlyList<TimeoutCause> Causes,
    IReadOnlyList<Evidence> Evidence,
    string Advice)
{
    /// <summary>The evidence as the lines people read, e.g. <c>thread-pool-starvation: WORKER Busy=40 &gt; Min=8 (...)</c>.</summary>
    public IReadOnlyList<string> EvidenceLines => [.. Evidence.Select(evidence => evidence.Line)];

    /// <summary>How firmly the evidence holds <see cref="Cause"/>: high for one strong sign alone, low for weak or tied signs.</summary>
    public DiagnosisConfidence Confidence { get; init; } = DiagnosisConfidence.Medium;

    /// <summary>
    /// How much each cause's evidence weighed when the message rules ran. The server correlation reads it:
    /// a cause held only weakly or clearly (or a lost connection) can be the consequence of a server that
    /// was blocked over the wait; a strong one has evidence of its own.
    /// </summary>
    public IReadOnlyDictionary<TimeoutCause, EvidenceWeight> Weights { get; init; } = NoWeights;

    private static readonly IReadOnlyDictionary<TimeoutCause, EvidenceWeight> NoWeights = new Dictionary<TimeoutCause, EvidenceWeight>();

    /// <summary>The weight of <paramref name="cause"/>'s evidence, <see cref="EvidenceWeight.None"/> when it has none.</summary>
    public EvidenceWeight WeightOf(TimeoutCause cause) => Weights.TryGetValue(cause, out var weight) ? weight : EvidenceWeight.None;
}
