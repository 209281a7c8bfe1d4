using System.Text.Json;
using System.Text.Json.Serialization;
using MuxWatch.Probing;

namespace MuxWatch.Json;

/// <summary>System.Text.Json source-generated serialization of MuxWatch's answers: camelCase, no reflection.</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web, WriteIndented = false, DefaultIgnoreCondition = JsonIgnoreCondition.Never)]
[JsonSerializable(typeof(TargetsAnswer))]
public sealed partial class MuxWatchJsonContext : JsonSerializerContext;

/// <summary>The answer of <c>/targets</c>: every watched multiplexer.</summary>
/// <param name="Targets">One entry per watched multiplexer, in registration order.</param>
public sealed record TargetsAnswer(IReadOnlyList<TargetStatus> Targets);
