using System.Text.Json;

namespace MuxWatch.AspNetCore;

/// <summary>
/// A section that a host adds to MuxWatch's <c>status</c> answer, such as the sidecar's refused posts.
/// Register implementations in DI; each writes one member named <see cref="Name"/>.
/// </summary>
public interface IMuxWatchStatusSection
{
    /// <summary>The JSON member this section is written under.</summary>
    string Name { get; }

    /// <summary>Writes the section's value (an object, a number, ...) at the writer's current position.</summary>
    void WriteValue(Utf8JsonWriter writer);
}
