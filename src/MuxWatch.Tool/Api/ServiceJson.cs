using System.Text.Json;
using MuxWatch.Json;

namespace MuxWatch.Tool.Api;

/// <summary>Options for every answer the sidecar writes: MuxWatch's and its own.</summary>
internal static class ServiceJson
{
    public static JsonSerializerOptions Options { get; } = MuxWatchJson.Create(ServiceJsonContext.Default);
}
