namespace MuxWatch.Model;

/// <summary>What a server answered when asked how large a key is (<c>MEMORY USAGE</c>).</summary>
/// <param name="Key">The key asked about.</param>
/// <param name="Bytes">Its size in bytes, value and overhead; null when it could not be had.</param>
/// <param name="Unknown">Why there is no size (the key is gone, the command refused, a reply that is no number); null when there is one.</param>
public sealed record KeySize(string Key, long? Bytes, string? Unknown);
