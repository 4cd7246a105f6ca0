/*
 * otf2dl.h: the OTF2 functions mpiflow uses, called through a dlopen()ed
 * libopen-trace-format2 (otf2dl.c), so that bin/mpiflow does not link it
 * and runs where OTF2 is not installed.
 *
 * mf_OTF2_X has the parameters of OTF2_X (otf2/otf2.h) and calls it. Call
 * mf_otf2_load (through Go's otf2dl.Load) first: before it succeeds, the
 * pointers behind these functions are NULL. A new OTF2 function is added
 * here, in the list MF_OTF2_FUNCS and as a wrapper in otf2dl.c.
 *
 * cgo code of other packages includes this header with
 * `#cgo CFLAGS: -I${SRCDIR}/../../internal/otf2dl` and imports the Go
 * package, whose objects hold the definitions: the references are resolved
 * when the command is linked (externally, as go links any program with cgo
 * code of its own). Nothing links libopen-trace-format2.
 */
#ifndef MPIFLOW_OTF2DL_H
#define MPIFLOW_OTF2DL_H

#include <stddef.h>
#include <otf2/otf2.h>

/* mf_otf2_load dlopen()s the library at path and looks up every function
 * of MF_OTF2_FUNCS in it. It returns 0 on success (the first library that
 * succeeds is the one used from then on; callers serialize calls), else -1
 * with the reason in err (n bytes). */
int mf_otf2_load(const char *path, char *err, size_t n);

/* mf_otf2_loaded tells whether a library was loaded. */
int mf_otf2_loaded(void);

OTF2_ErrorCode mf_OTF2_Archive_Close(OTF2_Archive *archive);
OTF2_ErrorCode mf_OTF2_Archive_CloseDefFiles(OTF2_Archive *archive);
OTF2_ErrorCode mf_OTF2_Archive_CloseDefWriter(OTF2_Archive *archive, OTF2_DefWriter *writer);
OTF2_ErrorCode mf_OTF2_Archive_CloseEvtFiles(OTF2_Archive *archive);
OTF2_ErrorCode mf_OTF2_Archive_CloseEvtWriter(OTF2_Archive *archive, OTF2_EvtWriter *writer);
OTF2_DefWriter *mf_OTF2_Archive_GetDefWriter(OTF2_Archive *archive, OTF2_LocationRef location);
OTF2_EvtWriter *mf_OTF2_Archive_GetEvtWriter(OTF2_Archive *archive, OTF2_LocationRef location);
OTF2_GlobalDefWriter *mf_OTF2_Archive_GetGlobalDefWriter(OTF2_Archive *archive);
OTF2_Archive *mf_OTF2_Archive_Open(const char *archivePath, const char *archiveName, const OTF2_FileMode fileMode,
		const uint64_t chunkSizeEvents, const uint64_t chunkSizeDefs, const OTF2_FileSubstrate fileSubstrate,
		const OTF2_Compression compression);
OTF2_ErrorCode mf_OTF2_Archive_OpenDefFiles(OTF2_Archive *archive);
OTF2_ErrorCode mf_OTF2_Archive_OpenEvtFiles(OTF2_Archive *archive);
OTF2_ErrorCode mf_OTF2_Archive_SetCreator(OTF2_Archive *archive, const char *creator);
OTF2_ErrorCode mf_OTF2_Archive_SetFlushCallbacks(OTF2_Archive *archive, const OTF2_FlushCallbacks *flushCallbacks,
		void *flushData);
OTF2_ErrorCode mf_OTF2_Archive_SetSerialCollectiveCallbacks(OTF2_Archive *archive);
const char *mf_OTF2_Error_GetDescription(OTF2_ErrorCode errorCode);
const char *mf_OTF2_Error_GetName(OTF2_ErrorCode errorCode);
OTF2_ErrorCode mf_OTF2_EvtReader_GetPos(OTF2_EvtReader *reader, uint64_t *position);
OTF2_ErrorCode mf_OTF2_EvtWriter_Enter(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList, OTF2_TimeStamp time,
		OTF2_RegionRef region);
OTF2_ErrorCode mf_OTF2_EvtWriter_Leave(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList, OTF2_TimeStamp time,
		OTF2_RegionRef region);
OTF2_ErrorCode mf_OTF2_EvtWriter_MpiCollectiveBegin(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time);
OTF2_ErrorCode mf_OTF2_EvtWriter_MpiCollectiveEnd(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time, OTF2_CollectiveOp collectiveOp, OTF2_CommRef communicator, uint32_t root, uint64_t sizeSent,
		uint64_t sizeReceived);
OTF2_ErrorCode mf_OTF2_EvtWriter_MpiRecv(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time, uint32_t sender, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength);
OTF2_ErrorCode mf_OTF2_EvtWriter_MpiSend(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time, uint32_t receiver, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength);
void mf_OTF2_GlobalDefReaderCallbacks_Delete(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks);
OTF2_GlobalDefReaderCallbacks *mf_OTF2_GlobalDefReaderCallbacks_New(void);
OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_ClockProperties clockPropertiesCallback);
OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetLocationCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_Location locationCallback);
OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_LocationGroup locationGroupCallback);
OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetRegionCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_Region regionCallback);
OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetStringCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_String stringCallback);
OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_SystemTreeNode systemTreeNodeCallback);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteClockProperties(OTF2_GlobalDefWriter *writerHandle,
		uint64_t timerResolution, uint64_t globalOffset, uint64_t traceLength, uint64_t realtimeTimestamp);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteComm(OTF2_GlobalDefWriter *writerHandle, OTF2_CommRef self,
		OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteGroup(OTF2_GlobalDefWriter *writerHandle, OTF2_GroupRef self,
		OTF2_StringRef name, OTF2_GroupType groupType, OTF2_Paradigm paradigm, OTF2_GroupFlag groupFlags,
		uint32_t numberOfMembers, const uint64_t *members);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteLocation(OTF2_GlobalDefWriter *writerHandle, OTF2_LocationRef self,
		OTF2_StringRef name, OTF2_LocationType locationType, uint64_t numberOfEvents, OTF2_LocationGroupRef locationGroup);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteLocationGroup(OTF2_GlobalDefWriter *writerHandle,
		OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType locationGroupType,
		OTF2_SystemTreeNodeRef systemTreeParent, OTF2_LocationGroupRef creatingLocationGroup);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteRegion(OTF2_GlobalDefWriter *writerHandle, OTF2_RegionRef self,
		OTF2_StringRef name, OTF2_StringRef canonicalName, OTF2_StringRef description, OTF2_RegionRole regionRole,
		OTF2_Paradigm paradigm, OTF2_RegionFlag regionFlags, OTF2_StringRef sourceFile, uint32_t beginLineNumber,
		uint32_t endLineNumber);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteString(OTF2_GlobalDefWriter *writerHandle, OTF2_StringRef self,
		const char *string);
OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteSystemTreeNode(OTF2_GlobalDefWriter *writerHandle,
		OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef className, OTF2_SystemTreeNodeRef parent);
void mf_OTF2_GlobalEvtReaderCallbacks_Delete(OTF2_GlobalEvtReaderCallbacks *globalEvtReaderCallbacks);
OTF2_GlobalEvtReaderCallbacks *mf_OTF2_GlobalEvtReaderCallbacks_New(void);
OTF2_ErrorCode mf_OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(OTF2_GlobalEvtReaderCallbacks *globalEvtReaderCallbacks,
		OTF2_GlobalEvtReaderCallback_Enter enterCallback);
OTF2_ErrorCode mf_OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(OTF2_GlobalEvtReaderCallbacks *globalEvtReaderCallbacks,
		OTF2_GlobalEvtReaderCallback_Leave leaveCallback);
OTF2_ErrorCode mf_OTF2_Reader_Close(OTF2_Reader *reader);
OTF2_ErrorCode mf_OTF2_Reader_CloseDefFiles(OTF2_Reader *reader);
OTF2_ErrorCode mf_OTF2_Reader_CloseDefReader(OTF2_Reader *reader, OTF2_DefReader *defReader);
OTF2_ErrorCode mf_OTF2_Reader_CloseGlobalDefReader(OTF2_Reader *reader, OTF2_GlobalDefReader *globalDefReader);
OTF2_ErrorCode mf_OTF2_Reader_CloseGlobalEvtReader(OTF2_Reader *reader, OTF2_GlobalEvtReader *globalEvtReader);
OTF2_DefReader *mf_OTF2_Reader_GetDefReader(OTF2_Reader *reader, OTF2_LocationRef location);
OTF2_EvtReader *mf_OTF2_Reader_GetEvtReader(OTF2_Reader *reader, OTF2_LocationRef location);
OTF2_GlobalDefReader *mf_OTF2_Reader_GetGlobalDefReader(OTF2_Reader *reader);
OTF2_GlobalEvtReader *mf_OTF2_Reader_GetGlobalEvtReader(OTF2_Reader *reader);
OTF2_Reader *mf_OTF2_Reader_Open(const char *anchorFilePath);
OTF2_ErrorCode mf_OTF2_Reader_OpenDefFiles(OTF2_Reader *reader);
OTF2_ErrorCode mf_OTF2_Reader_OpenEvtFiles(OTF2_Reader *reader);
OTF2_ErrorCode mf_OTF2_Reader_ReadAllGlobalDefinitions(OTF2_Reader *reader, OTF2_GlobalDefReader *defReader,
		uint64_t *definitionsRead);
OTF2_ErrorCode mf_OTF2_Reader_ReadAllLocalDefinitions(OTF2_Reader *reader, OTF2_DefReader *defReader,
		uint64_t *definitionsRead);
OTF2_ErrorCode mf_OTF2_Reader_ReadAllLocalEvents(OTF2_Reader *reader, OTF2_EvtReader *evtReader, uint64_t *eventsRead);
OTF2_ErrorCode mf_OTF2_Reader_ReadGlobalEvents(OTF2_Reader *reader, OTF2_GlobalEvtReader *evtReader,
		uint64_t eventsToRead, uint64_t *eventsRead);
OTF2_ErrorCode mf_OTF2_Reader_RegisterGlobalDefCallbacks(OTF2_Reader *reader, OTF2_GlobalDefReader *defReader,
		const OTF2_GlobalDefReaderCallbacks *callbacks, void *userData);
OTF2_ErrorCode mf_OTF2_Reader_RegisterGlobalEvtCallbacks(OTF2_Reader *reader, OTF2_GlobalEvtReader *evtReader,
		const OTF2_GlobalEvtReaderCallbacks *callbacks, void *userData);
OTF2_ErrorCode mf_OTF2_Reader_SelectLocation(OTF2_Reader *reader, OTF2_LocationRef location);
OTF2_ErrorCode mf_OTF2_Reader_SetSerialCollectiveCallbacks(OTF2_Reader *reader);

#endif
