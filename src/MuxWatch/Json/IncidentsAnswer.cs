using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary><c>GET {api}/incidents</c>: the newest incidents first.</summary>
/// <param name="Incidents">The incidents listed.</param>
/// <param name="Dropped">Incidents dropped since the start to keep the bound.</param>
public sealed record IncidentsAnswer(IReadOnlyList<Incident> Incidents, long Dropped);

/// <summary><c>GET {api}/incidents/{id}</c>: one incident and what its endpoint's server did meanwhile.</summary>
/// <param name="Incident">The incident.</param>
/// <param name="ServerEvents">The server events its span overlaps (the endpoint's timeline), at most 50.</param>
public sealed record IncidentAnswer(Incident Incident, IReadOnlyList<ServerEvent> ServerEvents);
