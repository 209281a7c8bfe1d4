using MuxWatch.Diagnosis;

namespace MuxWatch.Pipeline;

/// <summary>The message rules of docs/diagnosis.md, applied to the text and whatever the enrichers added.</summary>
internal sealed class MessageRulesStep : ITimeoutStep
{
    public TimeoutStepStage Stage => TimeoutStepStage.Diagnose;

    public void Apply(TimeoutContext timeout) =>
        timeout.Diagnosis = TimeoutDiagnoser.Diagnose(timeout.Report, timeout.Observation.ThreadPoolAtCatch, timeout.LiveCounters, timeout.ThreadPoolBeforeWait, timeout.Runtime);
}
