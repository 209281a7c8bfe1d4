using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using MuxWatch.Hosting;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Json;

/// <summary>The answer of <c>/targets</c>: every watched multiplexer.</summary>
/// <param name="Targets">One entry per watched multiplexer, in registration order.</param>
public sealed record TargetsAnswer(IReadOnlyList<TargetStatus> Targets);
