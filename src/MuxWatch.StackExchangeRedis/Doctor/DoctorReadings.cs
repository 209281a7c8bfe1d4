using MuxWatch.Model;

namespace MuxWatch.StackExchangeRedis.Doctor;

/// <summary>What the doctor read from one server, each part null when it could not be read.</summary>
internal sealed class DoctorReadings
{
    public Dictionary<string, string>? Info { get; set; }

    public Dictionary<string, string> Config { get; } = new(StringComparer.Ordinal);

    public List<SlowlogEntry>? Slowlog { get; set; }

    public List<(string Event, long LatestMs, long MaxMs)>? Latency { get; set; }

    public List<(string Address, string? Name, long OutputBytes, string? Command)>? Clients { get; set; }

    public List<string> Unread { get; } = [];
}
