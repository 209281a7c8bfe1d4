using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary>The answer of <c>/targets</c>: every watched multiplexer.</summary>
/// <param name="Targets">One entry per watched multiplexer, in registration order.</param>
public sealed record TargetsAnswer(IReadOnlyList<TargetStatus> Targets);
