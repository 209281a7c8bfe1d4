using System.Text.Json;
using System.Text.Json.Serialization;

namespace MuxWatch.Tool.Api;

/// <summary>The sidecar's own answers, serialized like MuxWatch's (same options, source-generated).</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(PostAnswer))]
[JsonSerializable(typeof(LineErrorAnswer))]
[JsonSerializable(typeof(LineSummaryAnswer))]
internal sealed partial class ServiceJsonContext : JsonSerializerContext;
