namespace MuxWatch.Pipeline;

/// <summary>The pipeline's first step: reads the message the source saw (never throws).</summary>
internal sealed class ReadStep : ITimeoutStep
{
    public static readonly ReadStep Instance = new();

    public TimeoutStepStage Stage => TimeoutStepStage.Read;

    public void Apply(TimeoutContext timeout) => timeout.Report = timeout.Observation.Message.Read();
}
