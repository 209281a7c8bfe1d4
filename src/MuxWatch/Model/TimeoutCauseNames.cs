
namespace MuxWatch.Model;

/// <summary>Label text for <see cref="TimeoutCause"/>.</summary>
public static class TimeoutCauseNames
{
    /// <summary>The kebab-case name used in metrics, JSON and docs, e.g. <c>thread-pool-starvation</c>.</summary>
    public static string ToName(this TimeoutCause cause) => KebabCaseNames<TimeoutCause>.Of(cause, "unknown");
}
