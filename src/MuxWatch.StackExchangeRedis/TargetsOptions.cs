namespace MuxWatch.StackExchangeRedis;

/// <summary>The <c>MuxWatch:Targets</c> list.</summary>
public sealed class TargetsOptions
{
    /// <summary>The targets; when none are configured, <c>localhost:6379</c> is watched as <c>local</c>.</summary>
    public List<TargetOptions> Targets { get; set; } = [];
}
