using MuxWatch.Model;
namespace MuxWatch.Sources;

/// <summary>Reports the watched multiplexers, for <c>/api/targets</c>.</summary>
public interface ITargetStatusSource
{
    /// <summary>The status of every watched multiplexer, in registration order.</summary>
    IReadOnlyList<TargetStatus> Targets();
}
